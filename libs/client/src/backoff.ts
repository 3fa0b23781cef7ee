/** How often, and how patiently, a failed attempt is tried again. */
export interface RetryPolicy {
  /** Attempts after the first; 0: never retry. */
  readonly retries: number;
  /** The wait before the first retry; each later one doubles it, up to maxDelayMs. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_REQUEST_RETRY: RetryPolicy = { retries: 2, baseDelayMs: 200, maxDelayMs: 2_000 };
export const DEFAULT_STREAM_RETRY: RetryPolicy = { retries: 5, baseDelayMs: 250, maxDelayMs: 5_000 };

/**
 * The wait before retry number `retry` (1-based): exponential, capped, with "equal jitter" (half
 * fixed, half random) so that clients a restart disconnected together do not come back together.
 */
export function retryDelayMs(policy: RetryPolicy, retry: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
