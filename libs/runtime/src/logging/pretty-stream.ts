import type { DestinationStream } from 'pino';

/** Fields shown in a pretty line's tail, in this order, under these short names. */
const CORRELATION: ReadonlyArray<readonly [string, string]> = [
  ['taskId', 'task'],
  ['turn', 'turn'],
  ['callId', 'call'],
  ['requestId', 'req'],
  ['traceId', 'trace'],
];

/**
 * LOG_FORMAT=pretty: `10:00:00.123 INFO [AgentRunner] message (task=… turn=2)` with the error's
 * stack below. pino-pretty is loaded only here, so the JSON mode never pays for it, and writes
 * synchronously in this thread: no worker thread (memory), no lines lost on a crash.
 */
export function prettyStream(destination: number | NodeJS.WritableStream = 1, colorize = Boolean(process.stdout.isTTY)): DestinationStream {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand, see above
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  return pretty.build({
    destination,
    sync: true,
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    hideObject: true,
    ignore: 'pid,hostname,service',
    messageFormat: (log, messageKey) => {
      const context = typeof log.context === 'string' ? `[${log.context}] ` : '';
      const tail = CORRELATION.filter(([key]) => log[key] !== undefined).map(([key, name]) => `${name}=${String(log[key])}`);
      const err = log.err as { stack?: string } | undefined;
      return `${context}${String(log[messageKey] ?? '')}${tail.length ? ` (${tail.join(' ')})` : ''}${err?.stack ? `\n${err.stack}` : ''}`;
    },
  });
}
