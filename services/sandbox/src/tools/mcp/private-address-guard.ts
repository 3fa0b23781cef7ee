import { checkDestination, guardedLookup } from '@app/common';
import type * as Undici from 'undici';

/**
 * The fetch a task's own MCP servers are reached with: a caller must not use our hosts to reach
 * private networks or cloud metadata. Names are checked in the socket's own DNS lookup, as
 * web_fetch does (the connection only ever goes to a checked address: no DNS rebinding); IP
 * literals before connecting; redirects are refused. `allowHosts` (`host:port`) may be private.
 */
export function privateAddressGuardedFetch(allowHosts: ReadonlySet<string>): typeof fetch {
  // undici and the agent are made at the first request to a task's MCP server: undici costs every
  // start about 0.1 s of CPU, and most tasks have no MCP server (BENCHMARKS.md, "Footprint").
  let guarded: { readonly fetch: typeof Undici.fetch; readonly agent: Undici.Agent } | undefined;
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (checkDestination(url, allowHosts, 'MCP_ALLOW_HOSTS').allowListed) return fetch(input, { ...init, redirect: 'error' });
    if (!guarded) {
      const undici = await import('undici');
      guarded ??= { fetch: undici.fetch, agent: new undici.Agent({ connect: { lookup: guardedLookup('MCP_ALLOW_HOSTS') } }) };
    }
    return guarded.fetch(
      input as never,
      { ...(init as object), redirect: 'error', dispatcher: guarded.agent } as never,
    ) as unknown as Response;
  }) as typeof fetch;
}
