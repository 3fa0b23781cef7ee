import { intFromEnv, shutdownGraceMs, shutdownTimeoutMsFromEnv } from '@app/common';
import type { SearchConfig } from '@app/search-provider';
import { searchConfigFromEnv } from '@app/search-provider';
import type { SandboxConfig } from '../provider/sandbox.config';
import { sandboxConfigFromEnv } from '../provider/sandbox.config';
import type { SessionLimits } from '../sessions/sandbox-sessions';
import type { McpSettings } from '../tools/mcp/mcp.config';
import { mcpSettingsFromEnv } from '../tools/mcp/mcp.config';
import type { WebFetchConfig } from '../tools/web-fetch/web-fetch.config';
import { webFetchConfigFromEnv } from '../tools/web-fetch/web-fetch.config';
import type { UploadLimits } from '../uploads/upload-limits';
import { uploadLimitsFromEnv } from '../uploads/upload-limits';

export const SANDBOX_SETTINGS = Symbol('SANDBOX_SETTINGS');

/** Everything the sandbox service reads from its environment, checked at start-up. */
export interface SandboxSettings {
  readonly provider: SandboxConfig;
  readonly sessions: SessionLimits;
  /** How long a sandbox instance's hold on a task outlives its last renewal (a crashed holder's cost). */
  readonly leaseTtlMs: number;
  readonly uploads: UploadLimits;
  readonly mcp: McpSettings;
  readonly webFetch: WebFetchConfig;
  /** Absent when no search provider is configured: then there is no `web_search` tool. */
  readonly search?: SearchConfig;
  /** On shutdown, how long running calls may go on before they are stopped (part of SHUTDOWN_TIMEOUT_MS). */
  readonly shutdownGraceMs: number;
}

export function sandboxSettingsFromEnv(env: NodeJS.ProcessEnv): SandboxSettings {
  return {
    provider: sandboxConfigFromEnv(env),
    sessions: {
      idleTtlMs: intFromEnv(env, 'SANDBOX_IDLE_TTL_MS', 900_000, { min: 1 }),
      snapshotMaxBytes: intFromEnv(env, 'SANDBOX_SNAPSHOT_MAX_BYTES', 2 * 1024 ** 3, { min: 1 }),
      snapshotTimeoutMs: intFromEnv(env, 'SANDBOX_SNAPSHOT_TIMEOUT_MS', 300_000, { min: 1 }),
      // Past 20 the doubling waits (2^18 TTLs before the 20th) would never end: ask for fewer.
      snapshotMaxAttempts: intFromEnv(env, 'SANDBOX_SNAPSHOT_MAX_ATTEMPTS', 4, { min: 1, max: 20 }),
    },
    leaseTtlMs: intFromEnv(env, 'SANDBOX_LEASE_TTL_MS', 15_000, { min: 1_000 }),
    uploads: uploadLimitsFromEnv(env),
    mcp: mcpSettingsFromEnv(env),
    webFetch: webFetchConfigFromEnv(env),
    search: searchConfigFromEnv(env),
    shutdownGraceMs: shutdownGraceMs(shutdownTimeoutMsFromEnv(env)),
  };
}

/** How often idle sandboxes are looked for: often enough to honour the TTL, never busier than 10/s. */
export const expirySweepIntervalMs = (idleTtlMs: number): number => Math.min(60_000, Math.max(100, Math.floor(idleTtlMs / 2)));
