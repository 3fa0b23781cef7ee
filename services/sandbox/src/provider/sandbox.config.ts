import { boolFromEnv, intFromEnv } from '@app/common';
import { SandboxLimits } from './sandbox-provider.port';

export type SandboxProviderName = 'bubblewrap' | 'unsafe-host';

export interface SandboxConfig {
  readonly provider: SandboxProviderName;
  readonly limits: SandboxLimits;
  /** Network inside sandboxes (SANDBOX_NETWORK); off by default. */
  readonly network: boolean;
  /** Each task's sandbox runs as uid/gid uidBase + (hash of the task id mod uidCount). */
  readonly uidBase: number;
  readonly uidCount: number;
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
    network: boolFromEnv(env, 'SANDBOX_NETWORK', false),
    uidBase: intFromEnv(env, 'SANDBOX_UID_BASE', 200_000, { min: 1000 }),
    uidCount: intFromEnv(env, 'SANDBOX_UID_COUNT', 50_000, { min: 1 }),
  };
}
