import { AddressRefusedError } from './address-refused.error';
import { allowListKey, bareHostname, checkDestination, parseAllowHosts } from './allow-hosts';

describe('parseAllowHosts', () => {
  it('normalises entries as the URL parser does, so they match fetched URLs', () => {
    expect(parseAllowHosts(' LocalHost:8080, [0::1]:3000 ,127.1:80,,wiki.internal:443 ', 'X_ALLOW_HOSTS')).toEqual(
      new Set(['localhost:8080', '[::1]:3000', '127.0.0.1:80', 'wiki.internal:443']),
    );
  });

  it('is empty for an empty or blank value', () => {
    expect(parseAllowHosts('', 'X_ALLOW_HOSTS')).toEqual(new Set());
    expect(parseAllowHosts(' , ', 'X_ALLOW_HOSTS')).toEqual(new Set());
  });

  it.each([
    ['localhost', 'must be host:port'],
    ['http://localhost:8080', 'must be host:port'],
    ['user@localhost:8080', 'must be host:port'],
    ['localhost:80/path', 'must be host:port'],
    ['::1:8080', 'must be host:port'],
    ['localhost:0', 'outside 1-65535'],
    ['localhost:70000', 'outside 1-65535'],
    ['[::g]:80', 'must be host:port'],
    ['[1::2::3]:80', 'does not name a valid host'],
    ['exa%mple.com:80', 'does not name a valid host'],
  ])('refuses %s: %s, naming the variable', (entry, message) => {
    expect(() => parseAllowHosts(`ok.example:80,${entry}`, 'X_ALLOW_HOSTS')).toThrow(`X_ALLOW_HOSTS entry "${entry}"`);
    expect(() => parseAllowHosts(entry, 'X_ALLOW_HOSTS')).toThrow(message);
  });
});

describe('allowListKey', () => {
  it('defaults the port from the scheme and writes the host as parseAllowHosts does', () => {
    expect(allowListKey(new URL('https://Docs.Example/a'))).toBe('docs.example:443');
    expect(allowListKey(new URL('http://docs.example/a'))).toBe('docs.example:80');
    expect(allowListKey(new URL('http://[0:0::1]:8080/'))).toBe('[::1]:8080');
    expect(parseAllowHosts('[::1]:8080', 'X_ALLOW_HOSTS').has(allowListKey(new URL('http://[::1]:8080/x')))).toBe(true);
  });
});

describe('bareHostname', () => {
  it('drops the brackets of an IPv6 literal and leaves names alone', () => {
    expect(bareHostname(new URL('http://[::1]:8080/'))).toBe('::1');
    expect(bareHostname(new URL('http://Docs.Example/'))).toBe('docs.example');
  });
});

describe('checkDestination', () => {
  const none = new Set<string>();

  it('refuses a forbidden IP literal, naming the allow-list variable', () => {
    const check = () => checkDestination(new URL('http://127.0.0.1:9000/hook'), none, 'X_ALLOW_HOSTS');
    expect(check).toThrow(AddressRefusedError);
    expect(check).toThrow('refused: 127.0.0.1 is a loopback address; only public addresses are reached (hosts in X_ALLOW_HOSTS excepted)');
    expect(() => checkDestination(new URL('http://[::ffff:10.0.0.1]/'), none, 'X_ALLOW_HOSTS')).toThrow('a private address');
  });

  it('lets an allow-listed host:port through, and only on that port', () => {
    const allow = parseAllowHosts('127.0.0.1:9000', 'X_ALLOW_HOSTS');
    expect(checkDestination(new URL('http://127.0.0.1:9000/hook'), allow, 'X_ALLOW_HOSTS')).toEqual({ allowListed: true });
    expect(() => checkDestination(new URL('http://127.0.0.1:9001/hook'), allow, 'X_ALLOW_HOSTS')).toThrow(AddressRefusedError);
  });

  it('leaves names and public literals to be judged at connect time', () => {
    expect(checkDestination(new URL('https://localhost/'), none, 'X_ALLOW_HOSTS')).toEqual({ allowListed: false });
    expect(checkDestination(new URL('https://8.8.8.8/'), none, 'X_ALLOW_HOSTS')).toEqual({ allowListed: false });
  });
});
