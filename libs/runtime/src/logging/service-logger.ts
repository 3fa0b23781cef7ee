import type { LoggerService, LogLevel } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import { hostname } from 'node:os';
import type { DestinationStream, Logger as Pino } from 'pino';
import pino from 'pino';
import { currentLogContext } from '@app/common';
import type { LogFormat } from './log-format';
import { logFormatFromEnv } from './log-format';
import { PINO_LEVEL, logLevelFromEnv } from './log-level';
import { prettyStream } from './pretty-stream';

/** Masks a task's secrets in a text (SecretVault.redact). */
export type TaskRedactor = (taskId: string, text: string) => string;

export interface ServiceLoggerOptions {
  /** Which process writes: `standalone`, `api`, `orchestrator`, `sandbox`, `artifacts`. */
  readonly service: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Overrides LOG_LEVEL. */
  readonly level?: LogLevel;
  /** Overrides LOG_FORMAT. */
  readonly format?: LogFormat;
  /** Where lines go (tests); default stdout. */
  readonly destination?: NodeJS.WritableStream;
}

/**
 * Paths pino censors in any object logged: credentials of requests (ours and the model's or a
 * webhook's) and a task's secrets and env, wherever a future line might carry them.
 */
const CENSORED_PATHS = [
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  'headers["x-subscription-token"]',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["x-api-key"]',
  '*.headers["x-subscription-token"]',
  'secrets',
  '*.secrets',
];

/**
 * Nest's LoggerService over pino: every `new Logger('Context')` in the code writes one JSON line
 * (or a pretty one) with level, time, service, context and msg, plus the task id, turn, call id
 * and request id of the log context it runs in (libs/common log-context) and the trace id of the
 * active OpenTelemetry span. Inside a task's context the text is redacted with that task's secrets.
 */
export class ServiceLogger implements LoggerService {
  private readonly pino: Pino;
  private redactor?: TaskRedactor;

  constructor(options: ServiceLoggerOptions) {
    const env = options.env ?? process.env;
    const level = PINO_LEVEL[options.level ?? logLevelFromEnv(env)];
    const format = options.format ?? logFormatFromEnv(env);
    // JSON goes through process.stdout (synchronous on Linux for files, pipes and terminals), so it
    // stays in order with anything written by console.* and is seen by whatever wraps stdout.
    const stream: DestinationStream =
      format === 'pretty'
        ? prettyStream(options.destination ?? 1, options.destination ? false : undefined)
        : (options.destination ?? process.stdout);
    this.pino = pino(
      {
        level,
        base: { service: options.service, pid: process.pid, hostname: hostname() },
        timestamp: pino.stdTimeFunctions.isoTime,
        // Labels, not numbers, in JSON: `"level":"warn"` reads and filters without a lookup table.
        formatters: { level: (label) => ({ level: label }) },
        redact: { paths: CENSORED_PATHS, censor: '[REDACTED]' },
        // `err` is built (and redacted) in write(); pino's serializer would rename its type to Object.
        serializers: { err: (err: unknown) => err },
      },
      stream,
    );
  }

  /** Secrets are known once the app's vault exists, after the logger (which logs the boot) was made. */
  redactTaskSecretsWith(redactor: TaskRedactor): void {
    this.redactor = redactor;
  }

  isLevelEnabled(level: LogLevel): boolean {
    return this.pino.isLevelEnabled(PINO_LEVEL[level]);
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('log', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('verbose', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: LogLevel, message: unknown, params: unknown[]): void {
    const pinoLevel = PINO_LEVEL[level] as pino.Level;
    if (!this.pino.isLevelEnabled(pinoLevel)) return;
    const { context, stack, extra } = splitParams(level, params);
    const fields: Record<string, unknown> = { ...currentLogContext() };
    const traceId = trace.getActiveSpan()?.spanContext().traceId;
    if (traceId) fields.traceId = traceId;
    if (context) fields.context = context;
    const redact = this.redactorFor(fields.taskId);
    let text: string;
    if (message instanceof Error) {
      text = message.message;
      fields.err = { type: message.name, message: redact(message.message), stack: redact(message.stack ?? '') };
    } else if (isPlainObject(message)) {
      // A structured line: `{ msg, ...fields }` (the request log does this).
      const { msg, ...rest } = message;
      text = typeof msg === 'string' ? msg : '';
      for (const [key, value] of Object.entries(rest)) {
        if (typeof value === 'string') fields[key] = redact(value);
        else if (value instanceof Error)
          fields[key] = { type: value.name, message: redact(value.message), stack: redact(value.stack ?? '') };
        else fields[key] = value;
      }
    } else {
      text = String(message);
    }
    if (extra.length > 0) text = [text, ...extra.map(describe)].join(' ');
    if (stack) fields.err = { ...(fields.err as object | undefined), stack: redact(stack) };
    this.pino[pinoLevel](fields, redact(text));
  }

  private redactorFor(taskId: unknown): (text: string) => string {
    const redactor = this.redactor;
    if (!redactor || typeof taskId !== 'string') return (text) => text;
    return (text) => redactor(taskId, text);
  }
}

/**
 * Nest's calling convention, as its ConsoleLogger reads it: a Logger with a context appends it
 * as the last string; an error's stack comes before it (`error(message, stack, context)`).
 */
function splitParams(level: LogLevel, params: readonly unknown[]): { context?: string; stack?: string; extra: unknown[] } {
  if (params.length === 0) return { extra: [] };
  const last = params.at(-1);
  const context = typeof last === 'string' ? last : undefined;
  const rest = context === undefined ? [...params] : params.slice(0, -1);
  if (level !== 'error' && level !== 'fatal') return { context, extra: rest };
  // error(message, stack) from a Logger without context: a stack is told by its "at" lines.
  if (context !== undefined && rest.length === 0 && STACK.test(context)) return { stack: context, extra: [] };
  const candidate = rest.at(-1);
  if (rest.length > 0 && (typeof candidate === 'string' || candidate === undefined)) {
    return { context, stack: candidate as string | undefined, extra: rest.slice(0, -1) };
  }
  return { context, extra: rest };
}

const STACK = /^(.)+\n\s+at .+:\d+:\d+/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.message;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
