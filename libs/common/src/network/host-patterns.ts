/**
 * A task's egress allow-list (`network.allow`, else SANDBOX_EGRESS_ALLOW): `*` (any host), a host
 * name, or `*.` and a name (that name's subdomains, not the name itself), each optionally with a
 * `:port` (any port without). Names compare case-insensitively, as DNS does. Parsed where the list
 * is given (the create request, the setting) and matched by the sandbox's egress proxy.
 */
export interface HostPattern {
  readonly host: string;
  readonly wildcard: boolean;
  readonly port?: number;
}

const NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** Parses patterns; a bad one throws an error naming it and `source` (the setting or field). */
export function parseHostPatterns(patterns: readonly string[], source: string): HostPattern[] {
  return patterns.map((raw) => {
    const text = raw.trim().toLowerCase();
    const [, hostPart, portPart] = /^(.*?)(?::(\d{1,5}))?$/.exec(text) ?? [];
    const port = portPart === undefined ? undefined : Number(portPart);
    const badPort = port !== undefined && (port < 1 || port > 65535);
    if (hostPart === '*' && !badPort) return { host: '', wildcard: true, ...(port === undefined ? {} : { port }) };
    const wildcard = hostPart.startsWith('*.');
    const host = wildcard ? hostPart.slice(2) : hostPart;
    if (!NAME.test(host) || host.length > 253 || badPort)
      throw new Error(`${source}: "${raw}" is not a host pattern (*, a name, or *.name, each with an optional :port)`);
    return { host, wildcard, ...(port === undefined ? {} : { port }) };
  });
}

/** Whether `host` (lowercased) at `port` matches one of the patterns. */
export function matchesHostPatterns(patterns: readonly HostPattern[], host: string, port: number): boolean {
  const name = host.toLowerCase();
  return patterns.some((p) => {
    if (p.port !== undefined && p.port !== port) return false;
    if (p.host === '') return p.wildcard;
    return p.wildcard ? name.endsWith(`.${p.host}`) : name === p.host;
  });
}
