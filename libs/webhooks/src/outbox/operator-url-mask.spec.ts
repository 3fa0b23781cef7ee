import { maskOperatorUrl } from './operator-url-mask';

describe('maskOperatorUrl', () => {
  const delivery = (...errors: (string | undefined)[]) => ({
    id: 'wh_1',
    type: 'task.completed',
    status: 'failed' as const,
    attempts: errors.map((error) => ({ at: 'a', durationMs: 1, ...(error === undefined ? {} : { error }) })),
  });

  it("masks the operator URL's host, origin and whole text in attempt errors, and nothing else", () => {
    const url = 'https://hooks.example.com:8443/services/T1/B2/tok3n?x=tok3n';
    const masked = maskOperatorUrl(
      delivery(
        'could not deliver: getaddrinfo ENOTFOUND hooks.example.com',
        'could not deliver: connect ECONNREFUSED hooks.example.com:8443',
        `could not deliver: bad ${url}`,
        'the receiver answered 500',
        undefined,
      ),
      url,
    );
    expect(masked.attempts.map((a) => a.error)).toEqual([
      'could not deliver: getaddrinfo ENOTFOUND [WEBHOOK_URL]',
      'could not deliver: connect ECONNREFUSED [WEBHOOK_URL]',
      'could not deliver: bad [WEBHOOK_URL]',
      'the receiver answered 500',
      undefined,
    ]);
    expect(JSON.stringify(masked)).not.toMatch(/tok3n|hooks\.example\.com/);
  });
});
