import { checkDestination } from '@app/common';
import { ToolFailure } from '../tool.errors';

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
  return checkDestination(url, allowHosts, 'WEB_FETCH_ALLOW_HOSTS');
}
