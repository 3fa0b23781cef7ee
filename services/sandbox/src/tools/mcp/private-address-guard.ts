import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { forbiddenAddressReason } from '../web-fetch/address-policy';
import { forbiddenAddressError, guardedLookup } from '../web-fetch/guarded-lookup';
import { bareHostname } from '../web-fetch/hop-policy';
import { allowListKey } from '../web-fetch/web-fetch.config';

/**
 * The fetch a task's own MCP servers are reached with: a caller must not use our hosts to reach
 * private networks or cloud metadata. Names are checked in the socket's own DNS lookup, as
 * web_fetch does (the connection only ever goes to a checked address: no DNS rebinding); IP
 * literals before connecting; redirects are refused. `allowHosts` (`host:port`) may be private.
 */
export function privateAddressGuardedFetch(allowHosts: ReadonlySet<string>): typeof fetch {
  const agent = new Agent({ connect: { lookup: guardedLookup(undefined, 'MCP_ALLOW_HOSTS') } });
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (allowHosts.has(allowListKey(url))) return fetch(input, { ...init, redirect: 'error' });
    const host = bareHostname(url);
    const reason = isIP(host) ? forbiddenAddressReason(host) : undefined;
    if (reason) throw forbiddenAddressError(host, host, reason, 'MCP_ALLOW_HOSTS');
    return undiciFetch(input as never, { ...(init as object), redirect: 'error', dispatcher: agent } as never) as unknown as Response;
  }) as typeof fetch;
}
