// Small, strict readers for environment configuration: a bad value stops start-up with a
// message naming the variable, instead of surfacing later as odd behaviour.

export function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, { min = 0 }: { min?: number } = {}): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

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
