import type { LookupAddress } from 'node:dns';
import { AddressRefusedError } from './address-refused.error';
import { guardedLookup } from './guarded-lookup';

// What node:net would receive from the lookup: an error, or the addresses it may connect to.
function lookUp(addresses: LookupAddress[], all: boolean): Promise<{ error: Error | null; result: unknown[] }> {
  const lookup = guardedLookup('TEST_ALLOW_HOSTS', async () => addresses);
  return new Promise((resolve) => lookup('site.example', { all }, (error, ...result) => resolve({ error, result })));
}

const v4 = (address: string): LookupAddress => ({ address, family: 4 });
const v6 = (address: string): LookupAddress => ({ address, family: 6 });

describe('guardedLookup', () => {
  it('hands every public address to a Happy Eyeballs lookup', async () => {
    const addresses = [v6('2606:4700::1111'), v4('93.184.215.14')];
    await expect(lookUp(addresses, true)).resolves.toEqual({ error: null, result: [addresses] });
  });

  it('hands the first public address to a single-address lookup', async () => {
    await expect(lookUp([v4('93.184.215.14'), v4('8.8.8.8')], false)).resolves.toEqual({ error: null, result: ['93.184.215.14', 4] });
  });

  it('refuses the name when any one of its addresses is forbidden, without saying what it resolved to', async () => {
    const { error } = await lookUp([v4('93.184.215.14'), v4('169.254.169.254')], true);
    expect(error).toBeInstanceOf(AddressRefusedError);
    expect(error?.message).toBe(
      'refused: site.example is not a public address; ' + 'only public addresses are reached (hosts in TEST_ALLOW_HOSTS excepted)',
    );
  });

  it('refuses a name that resolves to IPv4-mapped loopback', async () => {
    const { error } = await lookUp([v6('::ffff:127.0.0.1')], false);
    expect(error?.message).toContain('site.example is not a public address');
    expect(error?.message).not.toMatch(/ffff|127|loopback/);
  });

  it('refuses a name that resolves to no address at all', async () => {
    const { error } = await lookUp([], true);
    expect(error?.message).toBe('site.example did not resolve to any address');
  });

  it('passes a resolver failure through', async () => {
    const lookup = guardedLookup('TEST_ALLOW_HOSTS', () =>
      Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND site.example'), { code: 'ENOTFOUND' })),
    );
    const error = await new Promise<Error | null>((resolve) => lookup('site.example', {}, (e) => resolve(e)));
    expect(error).toMatchObject({ code: 'ENOTFOUND' });
  });
});
