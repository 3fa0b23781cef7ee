import type { MessageBus } from './bus.port';
import { BusUnavailableError, HandlerUnavailableError, NoHandlerError, RemoteError } from './bus.port';

export interface DeliveryOptions {
  /** The whole budget: waiting for a connection or a handler, and the reply itself. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** First wait between attempts; doubled each time up to `maxRetryDelayMs`. */
  readonly retryDelayMs?: number;
  readonly maxRetryDelayMs?: number;
}

/**
 * A request that is worth repeating only while it was certainly never acted on: the connection
 * was down (BUS.UNAVAILABLE), nobody listened (BUS.NO_HANDLER, e.g. every instance restarting),
 * or the handler answered that it did nothing (HANDLER.UNAVAILABLE, e.g. its lease store was
 * still reconnecting after a NATS restart).
 * Those are retried with backoff within `timeoutMs`; a timeout or a handler's error is not, since
 * the work may have been done (a command must never run twice).
 */
export async function requestUntilDelivered<Req, Res>(
  bus: MessageBus,
  subject: string,
  payload: Req,
  options: DeliveryOptions,
): Promise<Res> {
  const deadline = Date.now() + options.timeoutMs;
  let delay = options.retryDelayMs ?? 100;
  for (;;) {
    const left = deadline - Date.now();
    try {
      return await bus.request<Req, Res>(subject, payload, { timeoutMs: Math.max(1, left) });
    } catch (error) {
      const undelivered = error instanceof BusUnavailableError || error instanceof NoHandlerError || saidUnavailable(error);
      if (!undelivered || options.signal?.aborted || Date.now() + delay >= deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, options.maxRetryDelayMs ?? 1_000);
  }
}

function saidUnavailable(error: unknown): boolean {
  return error instanceof RemoteError && error.remoteCode === HandlerUnavailableError.CODE;
}
