import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { HostPattern } from '@app/common';
import { forbiddenAddressReason, matchesHostPatterns } from '@app/common';

/** Where a connection may go: the address to connect to (the one that was checked), or why not. */
export type Destination =
  | { readonly allowed: true; readonly host: string; readonly port: number; readonly address: string }
  | { readonly allowed: false; readonly host: string; readonly port: number; readonly reason: string };

export interface DestinationPolicy {
  /** The task's `network.allow`, else SANDBOX_EGRESS_ALLOW. */
  readonly allow: readonly HostPattern[];
  /** Whether the task's own list (`network.allow`) or the default applies: named in a refusal. */
  readonly allowSource: string;
  /** SANDBOX_EGRESS_ALLOW_HOSTS keys (`host:port`, as the URL parser writes the host). */
  readonly allowHosts: ReadonlySet<string>;
}

export type ResolveAll = (host: string) => Promise<LookupAddress[]>;

const resolveWithDns: ResolveAll = (host) =>
  new Promise((resolve, reject) => lookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/**
 * Judges `target` (`host:port`, as a CONNECT line or a proxy request names it): the task's
 * patterns first, then the address. A host in SANDBOX_EGRESS_ALLOW_HOSTS goes anywhere it
 * resolves to; any other must resolve only to public addresses, none of this host's own (so not
 * the service's ports, on any interface), in every spelling (the URL parser reads `127.1`,
 * `0x7f000001` and `[::ffff:127.0.0.1]` as the addresses they are), and the connection is made to
 * the address that was checked, so a name that answers differently next time (DNS rebinding)
 * cannot slip through. A refusal names the rule, never what a name resolved to.
 */
export async function judgeDestination(
  target: string,
  policy: DestinationPolicy,
  resolveAll: ResolveAll = resolveWithDns,
  own: () => ReadonlySet<string> = ownAddresses,
): Promise<Destination> {
  const parsed = parseTarget(target);
  if (!parsed) return { allowed: false, host: target.slice(0, 255), port: 0, reason: 'refused: not a host:port' };
  const { host, port } = parsed;
  const refuse = (reason: string): Destination => ({ allowed: false, host, port, reason: `refused: ${reason}` });
  if (!matchesHostPatterns(policy.allow, host, port)) return refuse(`not in ${policy.allowSource}`);
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const listed = policy.allowHosts.has(`${host}:${port}`);
  let addresses: string[];
  if (isIP(bare)) addresses = [bare];
  else {
    try {
      addresses = (await resolveAll(bare)).map((a) => a.address);
    } catch {
      return refuse('the name does not resolve');
    }
    if (addresses.length === 0) return refuse('the name does not resolve');
  }
  if (!listed) {
    const ours = own();
    if (addresses.some((a) => forbiddenAddressReason(a) !== undefined || ours.has(a)))
      return refuse('not a public address (SANDBOX_EGRESS_ALLOW_HOSTS lists exceptions)');
  }
  return { allowed: true, host, port, address: addresses[0] };
}

/** `host:port` read the way a URL is: the host normalised (case, IPv4 shorthand and hex, IPv6 forms), the port required. */
function parseTarget(target: string): { host: string; port: number } | undefined {
  if (!/^(\[[0-9a-fA-F:.]+\]|[^\s/\\@?#:[\]]+):\d{1,5}$/.test(target)) return undefined;
  try {
    const url = new URL(`http://${target}/`);
    const port = Number(target.slice(target.lastIndexOf(':') + 1));
    if (port < 1 || port > 65535) return undefined;
    return { host: url.hostname, port };
  } catch {
    return undefined;
  }
}

/** Every address of this host's interfaces: a task must not reach the service (or anything else here) through them. */
function ownAddresses(): ReadonlySet<string> {
  const addresses = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const entry of list ?? []) addresses.add(entry.address);
  return addresses;
}
