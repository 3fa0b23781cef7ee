import { plainHttpWarning } from '../src/plain-http-warning';

describe('plainHttpWarning: the key sent in clear to another machine', () => {
  it.each(['http://127.0.0.1:3000', 'http://localhost:3000', 'http://[::1]:3000', 'http://127.8.9.10', 'https://ats.example.com'])(
    'says nothing for %s (loopback, or https)',
    (url) => expect(plainHttpWarning(url)).toBeUndefined(),
  );

  it.each(['http://ats.example.com', 'http://10.0.0.5:3000', 'http://127.0.0.1.example.com', 'http://[::2]:3000'])(
    'warns for %s, naming the host',
    (url) => expect(plainHttpWarning(url)).toMatch(/^ats: warning: .* over plain http/),
  );

  it('names the host and port it warns about', () => {
    expect(plainHttpWarning('http://ats.example.com:8080/base')).toBe(
      'ats: warning: ats.example.com:8080 is reached over plain http: the API key can be read on the way; use https',
    );
  });
});
