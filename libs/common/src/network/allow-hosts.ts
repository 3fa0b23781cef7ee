import { isIP } from 'node:net';
import { forbiddenAddressReason } from './address-policy';
import { AddressRefusedError } from './address-refused.error';

// A bracketed IPv6 literal or a name/IPv4 without URL punctuation; the port comes after the last colon.
const ENTRY = /^(\[[0-9A-Fa-f:.]+\]|[^\s/\\@?#:[\]]+):(\d{1,5})$/;

/**
 * Parses an allow-list setting (`WEB_FETCH_ALLOW_HOSTS`, `MCP_ALLOW_HOSTS`, `WEBHOOK_ALLOW_HOSTS`):
 * comma-separated `host:port`, e.g. `localhost:8080,[::1]:3000,wiki.internal:443`, into the keys
 * `allowListKey` makes of URLs. A bad entry throws an error naming `variable`.
 */
export function parseAllowHosts(raw: string, variable: string): ReadonlySet<string> {
  const keys = new Set<string>();
  for (const entry of raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')) {
    const match = ENTRY.exec(entry);
    if (!match) throw new Error(`${variable} entry "${entry}" must be host:port, e.g. localhost:8080 or [::1]:8080`);
    const port = Number(match[2]);
    if (port < 1 || port > 65535) throw new Error(`${variable} entry "${entry}" has port ${match[2]}, outside 1-65535`);
    keys.add(`${normaliseHost(match[1], entry, variable)}:${port}`);
  }
  return keys;
}

/** The allow-list key of a URL: its host as the URL parser normalises it, and its port, defaulted from the scheme. */
export function allowListKey(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
}

/** The hostname as node:http and undici's connect want it: IPv6 literals without their URL brackets. */
export function bareHostname(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * What can be checked before connecting to `url`: says whether its `host:port` is allow-listed,
 * and throws AddressRefusedError for a forbidden IP literal that is not (node:net connects to a
 * literal without any lookup, so `guardedLookup` never sees it). Names are judged later, by
 * `guardedLookup`, on the addresses they resolve to.
 */
export function checkDestination(url: URL, allowHosts: ReadonlySet<string>, allowSetting: string): { allowListed: boolean } {
  if (allowHosts.has(allowListKey(url))) return { allowListed: true };
  const host = bareHostname(url);
  const reason = isIP(host) ? forbiddenAddressReason(host) : undefined;
  if (reason) throw new AddressRefusedError(host, host, reason, allowSetting);
  return { allowListed: false };
}

// Goes through the same URL parser as fetched URLs, so `LOCALHOST`, `127.1` and `[0::1]` match what a URL says.
function normaliseHost(host: string, entry: string, variable: string): string {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    throw new Error(`${variable} entry "${entry}" does not name a valid host`);
  }
}
