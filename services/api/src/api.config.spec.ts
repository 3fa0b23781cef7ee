import { ApiConfig } from './api.config';

describe('ApiConfig: the HTTP receive timeouts', () => {
  it("defaults to Node's own: 60 s for the headers, 300 s for the whole request", () => {
    const config = new ApiConfig({});
    expect([config.httpHeadersTimeoutMs, config.httpRequestTimeoutMs]).toEqual([60_000, 300_000]);
  });

  it('takes HTTP_HEADERS_TIMEOUT_MS and HTTP_REQUEST_TIMEOUT_MS, 0 turning the request bound off', () => {
    const config = new ApiConfig({ HTTP_HEADERS_TIMEOUT_MS: '400000', HTTP_REQUEST_TIMEOUT_MS: '0' });
    expect([config.httpHeadersTimeoutMs, config.httpRequestTimeoutMs]).toEqual([400_000, 0]);
  });

  it('refuses a headers timeout longer than the request timeout, which Node would refuse at start', () => {
    expect(() => new ApiConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '1000' })).toThrow(
      'HTTP_HEADERS_TIMEOUT_MS (5000) must not exceed HTTP_REQUEST_TIMEOUT_MS (1000)',
    );
  });

  it('refuses a headers timeout of 0: a client could hold a connection forever sending headers', () => {
    expect(() => new ApiConfig({ HTTP_HEADERS_TIMEOUT_MS: '0' })).toThrow('HTTP_HEADERS_TIMEOUT_MS must be an integer >= 1');
  });
});

describe('ApiConfig: the token budget default and cap', () => {
  it('takes TASK_MAX_TOKENS as the default and TASK_MAX_TOKENS_CAP as the cap; neither: unlimited', () => {
    expect(new ApiConfig({})).toMatchObject({ taskMaxTokens: undefined, taskMaxTokensCap: undefined });
    expect(new ApiConfig({ TASK_MAX_TOKENS: '500', TASK_MAX_TOKENS_CAP: '1000' })).toMatchObject({
      taskMaxTokens: 500,
      taskMaxTokensCap: 1000,
    });
  });

  it('gives tasks created without maxTokens the cap when TASK_MAX_TOKENS is unset', () => {
    expect(new ApiConfig({ TASK_MAX_TOKENS_CAP: '1000' }).taskMaxTokens).toBe(1000);
  });

  it('refuses to start with a default above the cap', () => {
    expect(() => new ApiConfig({ TASK_MAX_TOKENS: '2000', TASK_MAX_TOKENS_CAP: '1000' })).toThrow(
      'TASK_MAX_TOKENS (2000) must not exceed TASK_MAX_TOKENS_CAP (1000)',
    );
  });
});

describe('ApiConfig: the cost budget default', () => {
  it('takes TASK_MAX_COST_USD as the default budget of a task created without maxCostUsd; unset: unlimited', () => {
    expect(new ApiConfig({}).taskMaxCostUsd).toBeUndefined();
    expect(new ApiConfig({ TASK_MAX_COST_USD: '2.5' }).taskMaxCostUsd).toBe(2.5);
  });

  it.each(['0', '-1', 'ten', 'Infinity'])('refuses to start with TASK_MAX_COST_USD=%s, saying what it must be', (value) => {
    expect(() => new ApiConfig({ TASK_MAX_COST_USD: value })).toThrow(`TASK_MAX_COST_USD must be a positive number of USD, got "${value}"`);
  });
});
