import { LookupAddress, lookup } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { forbiddenAddressReason } from '../web-fetch/address-policy';
import { allowListKey } from '../web-fetch/web-fetch.config';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The fetch a task's own MCP servers are reached with: a caller must not use our hosts to reach
 * private networks or cloud metadata. Every address a name resolves to is checked in the socket's
 * own DNS lookup, so the connection only ever goes to a checked address (no DNS rebinding);
 * IP literals are checked before connecting; redirects are refused. `allowHosts` (`host:port`
 * keys) may be private.
 */
export function privateAddressGuardedFetch(allowHosts: ReadonlySet<string>): typeof fetch {
  const agent = new Agent({ connect: { lookup: guardedLookup } });
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (allowHosts.has(allowListKey(url))) return fetch(input, { ...init, redirect: 'error' });
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    const reason = isIP(literal) ? forbiddenAddressReason(literal) : undefined;
    if (reason) throw new Error(`${url.host} is ${reason}: refused (allow it with MCP_ALLOW_HOSTS)`);
    return undiciFetch(input as never, { ...(init as object), redirect: 'error', dispatcher: agent } as never) as unknown as Response;
  }) as typeof fetch;
}

function guardedLookup(hostname: string, options: { all?: boolean }, callback: LookupCallback): void {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '');
    for (const { address } of addresses) {
      const reason = forbiddenAddressReason(address);
      if (reason) {
        return callback(Object.assign(new Error(`${hostname} resolves to ${address}, ${reason}: refused (allow it with MCP_ALLOW_HOSTS)`), { code: 'EACCES' }), '');
      }
    }
    if (options.all) return callback(null, addresses);
    return callback(null, addresses[0].address, addresses[0].family);
  });
}
