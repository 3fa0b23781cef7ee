import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { forbiddenAddressReason } from './address-policy';
import { AddressRefusedError, NoAddressError } from './address-refused.error';

export type ResolveAll = (hostname: string, options: LookupOptions) => Promise<LookupAddress[]>;

const resolveWithDns: ResolveAll = (hostname, options) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/**
 * A `lookup` for node:net (node:http, undici's `connect`) that resolves every address of the host
 * and refuses them all if any one is forbidden. The socket connects only to addresses this
 * returns, so a name that answers "public" to one query and "private" to the next (DNS rebinding)
 * cannot slip through. `allowSetting` names the variable that lists the exceptions.
 */
export function guardedLookup(allowSetting: string, resolveAll: ResolveAll = resolveWithDns): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, options).then(
      (addresses) => {
        const error = refusal(hostname, addresses, allowSetting);
        if (error) return callback(error, []);
        // With Happy Eyeballs (autoSelectFamily) net asks for all addresses; otherwise for one.
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}

function refusal(hostname: string, addresses: LookupAddress[], allowSetting: string): Error | undefined {
  if (addresses.length === 0) return new NoAddressError(hostname);
  for (const { address } of addresses) {
    const reason = forbiddenAddressReason(address);
    if (reason) return new AddressRefusedError(hostname, address, reason, allowSetting);
  }
  return undefined;
}
