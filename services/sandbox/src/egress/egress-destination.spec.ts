import { parseHostPatterns } from '@app/common';
import type { DestinationPolicy, ResolveAll } from './egress-destination';
import { judgeDestination } from './egress-destination';

// The judge alone, with the name service and this host's addresses given: what the int and e2e
// suites cannot set up here (a public address of this very host; a name that answers public then
// private) is decided by the same function.

const policy = (allow = ['*'], allowHosts: string[] = []): DestinationPolicy => ({
  allow: parseHostPatterns(allow, 'test'),
  allowSource: 'SANDBOX_EGRESS_ALLOW',
  allowHosts: new Set(allowHosts),
});
const answers =
  (table: Record<string, string[]>): ResolveAll =>
  async (host) => {
    if (!(host in table)) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return table[host].map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
const none = () => new Set<string>();
const NOT_PUBLIC = 'refused: not a public address (SANDBOX_EGRESS_ALLOW_HOSTS lists exceptions)';

describe('judgeDestination', () => {
  it('lets a public name through, to the very address it checked', async () => {
    await expect(judgeDestination('pypi.org:443', policy(), answers({ 'pypi.org': ['151.101.0.223'] }), none)).resolves.toEqual({
      allowed: true,
      host: 'pypi.org',
      port: 443,
      address: '151.101.0.223',
    });
  });

  it('refuses a name when any of its answers is not public, without saying which', async () => {
    const judged = await judgeDestination('mixed.example:443', policy(), answers({ 'mixed.example': ['151.101.0.223', '10.1.2.3'] }), none);
    expect(judged).toEqual({ allowed: false, host: 'mixed.example', port: 443, reason: NOT_PUBLIC });
    expect(JSON.stringify(judged)).not.toContain('10.1.2.3');
  });

  it("refuses this host's own public addresses (the service's ports on any interface)", async () => {
    const own = () => new Set(['203.0.113.7']);
    await expect(judgeDestination('203.0.113.7:3000', policy(), answers({}), own)).resolves.toMatchObject({
      allowed: false,
      reason: NOT_PUBLIC,
    });
    await expect(judgeDestination('me.example:3000', policy(), answers({ 'me.example': ['203.0.113.7'] }), own)).resolves.toMatchObject({
      allowed: false,
      reason: NOT_PUBLIC,
    });
  });

  it.each([
    ['127.1:80', '127.0.0.1'],
    ['0x7f000001:80', '127.0.0.1'],
    ['2130706433:80', '127.0.0.1'],
    ['[::ffff:127.0.0.1]:80', '[::ffff:7f00:1]'],
    ['[::1]:80', '[::1]'],
    ['[fd00::1]:80', '[fd00::1]'],
    ['100.64.0.1:80', '100.64.0.1'],
    ['0.0.0.0:80', '0.0.0.0'],
  ])('reads %s as the address it is (%s), and refuses it', async (target, host) => {
    await expect(judgeDestination(target, policy(), answers({}), none)).resolves.toEqual({
      allowed: false,
      host,
      port: 80,
      reason: NOT_PUBLIC,
    });
  });

  it('lets a host:port of SANDBOX_EGRESS_ALLOW_HOSTS reach a private address, and only that port', async () => {
    const mirror = policy(['*'], ['mirror.internal:443']);
    const resolve = answers({ 'mirror.internal': ['10.0.0.8'] });
    await expect(judgeDestination('mirror.internal:443', mirror, resolve, none)).resolves.toMatchObject({
      allowed: true,
      address: '10.0.0.8',
    });
    await expect(judgeDestination('mirror.internal:22', mirror, resolve, none)).resolves.toMatchObject({
      allowed: false,
      reason: NOT_PUBLIC,
    });
  });

  it('judges the patterns before the name is looked up: a refused host costs no DNS query', async () => {
    const asked: string[] = [];
    const resolve: ResolveAll = async (host) => {
      asked.push(host);
      return [{ address: '151.101.0.223', family: 4 }];
    };
    const judged = await judgeDestination(
      'evil.example:443',
      { ...policy(['pypi.org']), allowSource: "the task's network.allow" },
      resolve,
      none,
    );
    expect(judged).toEqual({ allowed: false, host: 'evil.example', port: 443, reason: "refused: not in the task's network.allow" });
    expect(asked).toEqual([]);
  });

  it.each(['pypi.org', 'pypi.org:0', 'pypi.org:443/x', 'user@pypi.org:443', ' pypi.org:443'])(
    'refuses the malformed target %j',
    async (target) => {
      await expect(judgeDestination(target, policy(), answers({ 'pypi.org': ['151.101.0.223'] }), none)).resolves.toMatchObject({
        allowed: false,
        reason: expect.stringMatching(/^refused: not a host:port|^refused:/),
      });
    },
  );

  it('says a name that does not resolve does not, and nothing more', async () => {
    await expect(judgeDestination('nowhere.invalid:443', policy(), answers({}), none)).resolves.toEqual({
      allowed: false,
      host: 'nowhere.invalid',
      port: 443,
      reason: 'refused: the name does not resolve',
    });
  });
});
