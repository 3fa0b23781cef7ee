import { SecretVault } from './secret-vault';

describe('SecretVault', () => {
  const vault = new SecretVault();
  vault.put('t1', { API_TOKEN: 'sk-live-12345', OTHER: 'p@ss word/+' });

  it('redacts plain, base64 and URL-encoded forms of every secret', () => {
    const b64 = Buffer.from('sk-live-12345').toString('base64');
    const text = `token=sk-live-12345 b64=${b64} url=${encodeURIComponent('p@ss word/+')}`;
    expect(vault.redact('t1', text)).toBe('token=[REDACTED:API_TOKEN] b64=[REDACTED:API_TOKEN] url=[REDACTED:OTHER]');
  });

  it('redacts strings nested in objects and arrays', () => {
    expect(vault.redactDeep('t1', { a: ['x sk-live-12345'], b: { c: 'p@ss word/+' }, n: 3 })).toEqual({
      a: ['x [REDACTED:API_TOKEN]'],
      b: { c: '[REDACTED:OTHER]' },
      n: 3,
    });
  });

  it('leaves text of tasks without secrets unchanged and forgets on request', () => {
    expect(vault.redact('other', 'sk-live-12345')).toBe('sk-live-12345');
    const v = new SecretVault();
    v.put('t', { K: 'abcdef' });
    v.forget('t');
    expect(v.redact('t', 'abcdef')).toBe('abcdef');
    expect(v.get('t')).toBeUndefined();
  });

  it('masks the start of a secret left at the end of cut-off output, and whole ones before it', () => {
    expect(vault.redactCutOutput('t1', 'a sk-live-12345 b sk-live-1')).toBe('a [REDACTED:API_TOKEN] b [REDACTED:API_TOKEN]');
    expect(vault.redactCutOutput('t1', 'ends with s')).toBe('ends with s');
    expect(vault.redactCutOutput('t1', 'plain tail')).toBe('plain tail');
  });
});
