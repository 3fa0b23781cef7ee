import { ToolFailure } from '../tool.errors';

/**
 * Runs `work` with a signal that fires when the call is cancelled or `timeoutMs` has passed, and
 * settles as soon as either happens, even if `work` is stuck somewhere the signal does not reach
 * (a DNS lookup cannot be cancelled). A timeout rejects with a ToolFailure saying so; a
 * cancellation rejects with the outer signal's reason.
 */
export async function withDeadline<T>(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  outer?.throwIfAborted();
  const controller = new AbortController();
  let stop!: (reason: unknown) => void;
  const stopped = new Promise<never>((_, reject) => (stop = reject));
  // Rejects `stopped` before aborting, so the race reports why rather than the abort's fallout.
  const end = (reason: unknown) => {
    stop(reason);
    controller.abort(reason);
  };
  const timer = setTimeout(() => end(new ToolFailure(`timed out after ${timeoutMs} ms (the WEB_FETCH_TIMEOUT_MS limit)`)), timeoutMs);
  const onCancel = () => end(outer?.reason);
  outer?.addEventListener('abort', onCancel, { once: true });
  try {
    return await Promise.race([work(controller.signal), stopped]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onCancel);
  }
}
