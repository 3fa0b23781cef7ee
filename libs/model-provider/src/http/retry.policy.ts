/** Exponential backoff with jitter: base·2^(n-1), scaled by a random 50–100 %, capped. */
export function backoffDelayMs(retry: number, baseDelayMs: number, maxDelayMs: number): number {
  const exponential = baseDelayMs * 2 ** (retry - 1);
  // "Equal jitter": spreads clients that failed together apart, yet never retries at once.
  return Math.min(maxDelayMs, exponential * (0.5 + Math.random() * 0.5));
}

/**
 * How long the server asked us to wait, from `retry-after-ms` (sent by OpenAI) or `Retry-After`
 * (seconds or an HTTP date). Undefined when absent or unreadable.
 */
export function retryAfterMs(header: (name: string) => string | undefined, now = Date.now()): number | undefined {
  const ms = Number(header('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = header('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Waits, but rejects with the signal's abort as soon as it fires. */
export function sleep(ms: number, signal: AbortSignal | undefined, onAbort: () => Error): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(onAbort());
    const abort = () => {
      clearTimeout(timer);
      reject(onAbort());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}
