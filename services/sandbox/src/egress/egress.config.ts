import type { HostPattern } from '@app/common';
import { intFromEnv, parseAllowHosts, parseHostPatterns } from '@app/common';

/** The egress proxy's settings (SANDBOX_NETWORK=egress). */
export interface EgressConfig {
  /** `host:port`s the proxy reaches although not public (an internal package mirror; tests): SANDBOX_EGRESS_ALLOW_HOSTS. */
  readonly allowHosts: ReadonlySet<string>;
  /** The allow-list of a task created without `network`: SANDBOX_EGRESS_ALLOW. */
  readonly defaultAllow: readonly HostPattern[];
  /** Connections of one task open at once: SANDBOX_EGRESS_MAX_CONNECTIONS. */
  readonly maxConnections: number;
  /** A connection with no byte either way this long is closed: SANDBOX_EGRESS_IDLE_TIMEOUT_MS. */
  readonly idleTimeoutMs: number;
}

export function egressConfigFromEnv(env: NodeJS.ProcessEnv): EgressConfig {
  const defaultAllow = (env.SANDBOX_EGRESS_ALLOW ?? '*')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return {
    allowHosts: parseAllowHosts(env.SANDBOX_EGRESS_ALLOW_HOSTS ?? '', 'SANDBOX_EGRESS_ALLOW_HOSTS'),
    defaultAllow: parseHostPatterns(defaultAllow, 'SANDBOX_EGRESS_ALLOW'),
    maxConnections: intFromEnv(env, 'SANDBOX_EGRESS_MAX_CONNECTIONS', 64, { min: 1, max: 10_000 }),
    idleTimeoutMs: intFromEnv(env, 'SANDBOX_EGRESS_IDLE_TIMEOUT_MS', 60_000, { min: 1_000 }),
  };
}
