// Small, strict readers for environment configuration: a bad value stops start-up with a
// message naming the variable, instead of surfacing later as odd behaviour.

export function intFromEnv(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  { min = 0, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  if (n > max) throw new Error(`${name} must be an integer <= ${max}, got "${raw}"`);
  return n;
}

/** The longest delay setTimeout honours: Node runs a longer one after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export function boolFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new Error(`${name} must be true or false, got "${env[name]}"`);
}

export function dataDirFromEnv(env: NodeJS.ProcessEnv): string {
  return env.DATA_DIR?.trim() || './data';
}

/** Default of SHUTDOWN_TIMEOUT_MS. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/**
 * SHUTDOWN_TIMEOUT_MS: the longest a process takes from SIGTERM to its exit (docs/operations/deployment.md
 * "Shutdown and rolling restarts"). At least a second: below that no step or request could finish, and the bound would only
 * turn every shutdown into a forced one.
 */
export function shutdownTimeoutMsFromEnv(env: NodeJS.ProcessEnv): number {
  return intFromEnv(env, 'SHUTDOWN_TIMEOUT_MS', DEFAULT_SHUTDOWN_TIMEOUT_MS, { min: 1_000, max: MAX_TIMER_MS });
}

/**
 * Of SHUTDOWN_TIMEOUT_MS, how long work in flight (an agent step, a tool command) may go on
 * finishing: all but the last 3 s, or half when that is more. The rest is for the work stopped
 * then to report back and the connections to close, inside the bound.
 */
export const shutdownGraceMs = (timeoutMs: number): number => Math.max(Math.floor(timeoutMs / 2), timeoutMs - 3_000);
