import { isAbsolute } from 'node:path';
import { intFromEnv } from '@app/common';
import type { EgressConfig } from '../egress/egress.config';
import { egressConfigFromEnv } from '../egress/egress.config';
import type { SandboxLimits } from './sandbox-provider.port';

export type SandboxProviderName = 'bubblewrap' | 'unsafe-host';

export interface SandboxConfig {
  readonly provider: SandboxProviderName;
  readonly limits: SandboxLimits;
  /** Network inside sandboxes (SANDBOX_NETWORK): none, or only through the service's egress proxy. */
  readonly network: 'off' | 'egress';
  /** The egress proxy's settings (used with `network: 'egress'`). */
  readonly egress: EgressConfig;
  /** Each live task's sandbox runs as a uid of its own from [uidBase, uidBase + uidCount), unique on the host. */
  readonly uidBase: number;
  readonly uidCount: number;
  /** Host-wide (every sandbox instance on the host): workspace mount points and uid claims (SANDBOX_RUNTIME_DIR). */
  readonly runtimeDir: string;
  /** `auto`: each workspace a filesystem of its own where the host allows (else a folder, said at start-up); `folder`: always a folder. */
  readonly workspaceFs: 'auto' | 'folder';
  /** `auto`: a cgroup per task where one is delegated (else rlimits, said at start-up); `off`: rlimits only. */
  readonly cgroups: 'auto' | 'off';
}

const MiB = 1024 * 1024;

export function sandboxConfigFromEnv(env: NodeJS.ProcessEnv): SandboxConfig {
  const provider = env.SANDBOX_PROVIDER?.trim() || 'bubblewrap';
  if (provider !== 'bubblewrap' && provider !== 'unsafe-host') {
    throw new Error(`SANDBOX_PROVIDER must be "bubblewrap" or "unsafe-host", got "${provider}"`);
  }
  return {
    provider,
    limits: {
      timeoutMs: intFromEnv(env, 'SANDBOX_TIMEOUT_MS', 120_000, { min: 1 }),
      cpuSeconds: intFromEnv(env, 'SANDBOX_CPU_SECONDS', 60, { min: 1 }),
      memoryBytes: intFromEnv(env, 'SANDBOX_MEMORY_BYTES', 2048 * MiB, { min: 64 * MiB }),
      maxProcesses: intFromEnv(env, 'SANDBOX_MAX_PROCESSES', 256, { min: 4 }),
      maxOutputBytes: intFromEnv(env, 'SANDBOX_MAX_OUTPUT_BYTES', MiB, { min: 1024 }),
      diskQuotaBytes: intFromEnv(env, 'SANDBOX_DISK_QUOTA_BYTES', 1024 * MiB, { min: MiB }),
    },
    network: networkFromEnv(env),
    egress: egressConfigFromEnv(env),
    uidBase: intFromEnv(env, 'SANDBOX_UID_BASE', 200_000, { min: 1000 }),
    uidCount: intFromEnv(env, 'SANDBOX_UID_COUNT', 50_000, { min: 1 }),
    runtimeDir: absolutePathFromEnv(env, 'SANDBOX_RUNTIME_DIR', '/run/agentic-task-service'),
    workspaceFs: oneOf(env, 'SANDBOX_WORKSPACE_FS', ['auto', 'folder'] as const),
    cgroups: oneOf(env, 'SANDBOX_CGROUPS', ['auto', 'off'] as const),
  };
}

/** `off` (or `false`) and `egress`; the host's whole network (`true`) is no longer offered: every connection goes through the proxy. */
function networkFromEnv(env: NodeJS.ProcessEnv): 'off' | 'egress' {
  const value = env.SANDBOX_NETWORK?.trim().toLowerCase() || 'off';
  if (value === 'off' || value === 'false') return 'off';
  if (value === 'egress') return 'egress';
  throw new Error(
    `SANDBOX_NETWORK must be "off" or "egress", got "${env.SANDBOX_NETWORK}"` +
      (value === 'true'
        ? ': sharing the host\'s network is no longer offered; "egress" lets commands out through the egress proxy, with per-task allow-lists'
        : ''),
  );
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[]): T {
  const value = env[name]?.trim() || values[0];
  if (!values.includes(value as T)) throw new Error(`${name} must be ${values.map((v) => `"${v}"`).join(' or ')}, got "${value}"`);
  return value as T;
}

function absolutePathFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const value = env[name]?.trim() || fallback;
  if (!isAbsolute(value)) throw new Error(`${name} must be an absolute path, got "${value}"`);
  return value;
}
