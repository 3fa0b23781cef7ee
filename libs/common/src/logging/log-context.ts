import { AsyncLocalStorage } from 'node:async_hooks';

/** What a log line says about the work it belongs to, when known. */
export interface LogContext {
  requestId?: string;
  taskId?: string;
  turn?: number;
  callId?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

/**
 * Runs `fn` with these fields on every log line written inside it, across awaits and callbacks;
 * `fields` becomes the scope's own object (annotateLogContext adds to it).
 * A scope starts afresh rather than inheriting the outer one: in the all-in-one mode a request's
 * append runs the agent loop synchronously, and its lines must not carry that request's id.
 */
export function runWithLogContext<T>(fields: LogContext, fn: () => T): T {
  return storage.run(fields, fn);
}

/** Adds what became known inside the current scope (the id of a task being created, a call's turn); nothing outside one. */
export function annotateLogContext(fields: LogContext): void {
  const current = storage.getStore();
  if (current) Object.assign(current, fields);
}

export function currentLogContext(): Readonly<LogContext> | undefined {
  return storage.getStore();
}
