/** The part of the webhook settings the retry schedule reads. */
export interface RetryPolicy {
  /** WEBHOOK_RETRY_BASE_MS: the wait after the first failed attempt; each later wait doubles. */
  readonly retryBaseMs: number;
  /** WEBHOOK_MAX_ATTEMPTS: attempts of one message, the first included. */
  readonly maxAttempts: number;
}

/** Jitter adds up to this share of the nominal wait, so the documented wait is the least one. */
const JITTER = 0.2;
/**
 * No wait is longer than a day, however the two settings multiply out (2^(n−1) overflows timers and
 * makes nonsense dates long before it overflows a number).
 */
export const MAX_RETRY_DELAY_MS = 24 * 60 * 60 * 1000;

/**
 * How long to wait, after attempt `failedAttempt` (1-based) of a message failed, before the next:
 * WEBHOOK_RETRY_BASE_MS × 2^(failedAttempt−1), plus up to 20% jitter so that the messages of a
 * receiver that was down do not all come back in the same instant. Undefined when that attempt was
 * the last one WEBHOOK_MAX_ATTEMPTS allows: the message has failed.
 */
export function retryDelayMs(failedAttempt: number, policy: RetryPolicy, random: () => number = Math.random): number | undefined {
  if (!Number.isInteger(failedAttempt) || failedAttempt < 1) throw new RangeError(`attempt numbers start at 1, got ${failedAttempt}`);
  if (failedAttempt >= policy.maxAttempts) return undefined;
  const nominal = Math.min(policy.retryBaseMs * 2 ** (failedAttempt - 1), MAX_RETRY_DELAY_MS);
  return Math.min(Math.round(nominal * (1 + JITTER * random())), MAX_RETRY_DELAY_MS);
}
