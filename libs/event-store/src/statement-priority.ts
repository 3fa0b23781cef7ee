import { AsyncLocalStorage } from 'node:async_hooks';

const urgent = new AsyncLocalStorage<true>();

/**
 * Runs `work` with its store statements ahead of those already waiting, where the adapter queues
 * statements (the embedded store: one PGlite connection, one queue). For small, bounded work on
 * a latency path, such as the webhook dispatcher's claim of a due message, which would otherwise
 * wait behind every statement of a burst of other tasks. Other adapters ignore it. Order between
 * the statements of one caller is unchanged: each is still awaited before the next is issued.
 */
export function aheadOfQueuedStatements<T>(work: () => Promise<T>): Promise<T> {
  return urgent.run(true, work);
}

/** Whether the statement being issued now was asked to go ahead (see aheadOfQueuedStatements). */
export const isAheadOfQueuedStatements = (): boolean => urgent.getStore() === true;
