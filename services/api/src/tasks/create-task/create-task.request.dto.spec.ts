import { ValidationError } from '@app/common';
import { SendFollowUpRequestDto } from '../../messages/send-follow-up/send-follow-up.request.dto';
import { validateInput } from '../../validation/validate-input';
import { CreateTaskRequestDto } from './create-task.request.dto';

const refusal = (type: new () => object, body: unknown) =>
  validateInput(type, body).then(
    () => undefined,
    (e: unknown) => (e instanceof ValidationError ? e.message : e),
  );

describe('free-text fields of the request DTOs', () => {
  it.each([
    ['a message with a NUL', { message: 'a\u0000b' }, 'message must not contain a NUL character'],
    ['a message with a lone surrogate', { message: 'a\ud800' }, 'message must not contain a lone UTF-16 surrogate (not valid Unicode)'],
    ['an env value with a NUL', { message: 'x', env: { REGION: 'eu\u0000' } }, 'env value of "REGION" must not contain a NUL character'],
    [
      'a secret value with a NUL',
      { message: 'x', secrets: { TOKEN: 'abc\u0000defgh' } },
      'secrets value of "TOKEN" must not contain a NUL character',
    ],
    [
      'a secret value with a lone surrogate',
      { message: 'x', secrets: { TOKEN: 'abcdefgh\udfff' } },
      'secrets value of "TOKEN" must not contain a lone UTF-16 surrogate',
    ],
    [
      'an mcpServers header with a NUL',
      { message: 'x', mcpServers: { d: { url: 'https://x', headers: { A: '\u0000' } } } },
      'mcpServers.d.headers.A must not contain a NUL character',
    ],
    [
      'an mcpServers name with a lone surrogate',
      { message: 'x', mcpServers: { '\ud800': { url: 'https://x' } } },
      'mcpServers: key "\ud800" must not contain a lone UTF-16 surrogate',
    ],
  ])('create refuses %s, naming the field', async (_case, body, message) => {
    expect(await refusal(CreateTaskRequestDto, body)).toContain(message);
  });

  it('never puts a secret value in the message', async () => {
    expect(await refusal(CreateTaskRequestDto, { message: 'x', secrets: { TOKEN: 'abc\u0000hunter2' } })).not.toContain('hunter2');
  });

  it('cuts a megabyte-long env key or unknown field name in the message', async () => {
    const badKey = (await refusal(CreateTaskRequestDto, { message: 'x', env: { ['K-'.repeat(500_000)]: 'v' } })) as string;
    expect(badKey.length).toBeLessThan(300);
    const unknownField = (await refusal(CreateTaskRequestDto, { message: 'x', ['x'.repeat(1_000_000)]: 1 })) as string;
    expect(unknownField.length).toBeLessThan(600);
  });

  it('follow-up refuses a NUL or a lone surrogate in message', async () => {
    expect(await refusal(SendFollowUpRequestDto, { message: 'more\u0000' })).toBe('message must not contain a NUL character');
    expect(await refusal(SendFollowUpRequestDto, { message: '\udc00' })).toBe(
      'message must not contain a lone UTF-16 surrogate (not valid Unicode)',
    );
  });

  it.each([
    ['empty', ''],
    ['spaces', '   '],
    ['tabs and newlines', '\t\n\r\n'],
    ['Unicode spaces', '\u00a0\u3000'],
  ])('refuses a message that is %s, on create as on a follow-up, with the same words', async (_case, message) => {
    expect(await refusal(CreateTaskRequestDto, { message })).toBe('message must be a non-empty string');
    expect(await refusal(SendFollowUpRequestDto, { message })).toBe('message must be a non-empty string');
  });

  it('accepts emoji and ordinary control characters', async () => {
    expect(await refusal(CreateTaskRequestDto, { message: 'ship \ud83d\ude80\tnow\n', env: { A: 'b\tc' } })).toBeUndefined();
  });
});

describe('maxTokens on create and follow-up', () => {
  it.each([
    ['zero', 0, 'maxTokens must be at least 1'],
    ['a fraction', 2.5, 'maxTokens must be a whole number of tokens'],
    ['text', '100', 'maxTokens must be a whole number of tokens'],
    ['beyond a safe integer', 2 ** 60, 'maxTokens must be at most'],
  ])('refuses %s', async (_case, maxTokens, message) => {
    expect(await refusal(CreateTaskRequestDto, { message: 'x', maxTokens })).toContain(message);
    expect(await refusal(SendFollowUpRequestDto, { message: 'x', maxTokens })).toContain(message);
  });

  it('accepts a whole number, or none', async () => {
    expect(await refusal(CreateTaskRequestDto, { message: 'x', maxTokens: 1 })).toBeUndefined();
    expect(await refusal(SendFollowUpRequestDto, { message: 'x', maxTokens: 50_000 })).toBeUndefined();
    expect(await refusal(SendFollowUpRequestDto, { message: 'x' })).toBeUndefined();
  });
});

describe('maxCostUsd on create and follow-up', () => {
  it.each([
    ['zero', 0, 'maxCostUsd must be a positive number of USD'],
    ['a negative number', -0.5, 'maxCostUsd must be a positive number of USD'],
    ['text', '2.5', 'maxCostUsd must be a number of USD'],
    ['not a number', Number.NaN, 'maxCostUsd must be a number of USD'],
    ['over a billion', 2e9, 'maxCostUsd must be at most'],
  ])('refuses %s', async (_case, maxCostUsd, message) => {
    expect(await refusal(CreateTaskRequestDto, { message: 'x', maxCostUsd })).toContain(message);
    expect(await refusal(SendFollowUpRequestDto, { message: 'x', maxCostUsd })).toContain(message);
  });

  it('accepts a positive number of USD, fractions included, or none', async () => {
    expect(await refusal(CreateTaskRequestDto, { message: 'x', maxCostUsd: 0.05 })).toBeUndefined();
    expect(await refusal(SendFollowUpRequestDto, { message: 'x', maxCostUsd: 12 })).toBeUndefined();
  });
});

describe('network on create', () => {
  it.each([
    ['patterns', { allow: ['pypi.org', '*.pythonhosted.org', 'registry.npmjs.org:443', '*'] }],
    ['nothing out', { allow: [] }],
    ['a name of 253 characters', { allow: [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`] }],
  ])('takes %s', async (_case, network) => {
    await expect(refusal(CreateTaskRequestDto, { message: 'x', network })).resolves.toBeUndefined();
  });

  it.each([
    ['not an object', ['pypi.org'], 'network must be an object: {"allow": ["host pattern", …]}'],
    ['no allow', {}, 'network.allow must be an array of host patterns ([] lets nothing out)'],
    ['another field', { allow: [], deny: [] }, 'network: unknown field "deny" (only "allow")'],
    ['a number', { allow: [443] }, 'network.allow[0] must be a string'],
    ['a URL', { allow: ['pypi.org', 'https://pypi.org/simple'] }, 'network.allow[1]: "https://pypi.org/simple" is not a host pattern'],
    ['a bad port', { allow: ['pypi.org:99999'] }, 'network.allow[0]: "pypi.org:99999" is not a host pattern'],
    ['too many', { allow: Array.from({ length: 101 }, (_, i) => `h${i}.example`) }, 'network.allow must have at most 100 patterns'],
    [
      'a pattern too long',
      { allow: [`*.${'a'.repeat(62)}.${'b'.repeat(62)}.${'c'.repeat(62)}.${'d'.repeat(62)}:443`] },
      'network.allow[0] must be at most 253 characters',
    ],
    ['spaces around a pattern', { allow: [' pypi.org'] }, 'network.allow[0]: " pypi.org" is not a host pattern'],
  ])('refuses %s, saying why', async (_case, network, message) => {
    await expect(refusal(CreateTaskRequestDto, { message: 'x', network })).resolves.toContain(message);
  });
});
