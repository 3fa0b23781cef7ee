import { isIP } from 'node:net';
import { ToolFailure } from '../tool.errors';
import { forbiddenAddressReason } from './address-policy';
import { forbiddenAddressError } from './guarded-lookup';
import { allowListKey } from './web-fetch.config';

/**
 * Checks what can be checked before connecting to `url` (the first URL or a redirect target) and
 * says whether its `host:port` is allow-listed. Names are checked later, on the addresses they
 * resolve to; IP literals here, since node:net connects to them without any lookup.
 */
export function checkHop(url: URL, allowHosts: ReadonlySet<string>): { allowListed: boolean } {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolFailure(`refused: ${url.protocol.replace(/:$/, '')} URLs are not fetched; only http and https`);
  }
  if (url.username !== '' || url.password !== '') throw new ToolFailure('refused: URLs with credentials (user:password@) are not fetched');
  if (allowHosts.has(allowListKey(url))) return { allowListed: true };
  const host = bareHostname(url);
  if (isIP(host)) {
    const reason = forbiddenAddressReason(host);
    if (reason) throw forbiddenAddressError(host, host, reason);
  }
  return { allowListed: false };
}

/** The hostname as node:http wants it: IPv6 literals without their URL brackets. */
export function bareHostname(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}
