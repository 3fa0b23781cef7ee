import type { LogLevel } from '@nestjs/common';

/** Nest's levels, most severe first. */
const ORDER: readonly LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];
/** pino's names for the same levels, accepted in LOG_LEVEL too. */
const ALIASES: Readonly<Record<string, LogLevel>> = { info: 'log', trace: 'verbose' };
/** The pino level each Nest level writes at. */
export const PINO_LEVEL: Readonly<Record<LogLevel, string>> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/**
 * `LOG_LEVEL` (default `log`): the least severe level a service prints, from `fatal`, `error`,
 * `warn`, `log` (or `info`), `debug` or `verbose` (or `trace`); every more severe level is printed too.
 */
export function logLevelFromEnv(env: NodeJS.ProcessEnv): LogLevel {
  const given = env.LOG_LEVEL?.trim().toLowerCase() || 'log';
  const level = ALIASES[given] ?? (given as LogLevel);
  if (!ORDER.includes(level)) throw new Error(`LOG_LEVEL must be one of ${ORDER.join(', ')}, got "${env.LOG_LEVEL}"`);
  return level;
}

/** The least severe of a list of levels (Nest's way of naming them: every level to print). */
export function leastSevereOf(levels: readonly LogLevel[]): LogLevel {
  return ORDER.filter((level) => levels.includes(level)).at(-1) ?? 'fatal';
}
