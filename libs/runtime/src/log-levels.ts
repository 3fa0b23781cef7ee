import { LogLevel } from '@nestjs/common';

const ORDER: readonly LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/**
 * `LOG_LEVEL` (default `log`): the least severe level a service prints, from `fatal`, `error`,
 * `warn`, `log`, `debug` or `verbose`; every more severe level is printed too.
 */
export function logLevelsFromEnv(env: NodeJS.ProcessEnv): LogLevel[] {
  const level = (env.LOG_LEVEL?.trim() || 'log') as LogLevel;
  const index = ORDER.indexOf(level);
  if (index < 0) throw new Error(`LOG_LEVEL must be one of ${ORDER.join(', ')}, got "${level}"`);
  return ORDER.slice(0, index + 1);
}
