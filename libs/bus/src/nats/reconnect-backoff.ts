export interface ReconnectBackoffOptions {
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
}

/**
 * Exponential backoff with jitter for nats.js's reconnect loop, which only offers a fixed wait.
 * nats.js asks for the delay on every pass of its loop (also the passes that merely sleep), so the
 * delay must not change between two attempts: it grows only when `attempted()` is told of a dial
 * (the connection's `reconnecting` status) and starts over at `reset()` (`reconnect`).
 */
export class ReconnectBackoff {
  private attempts = 0;
  private jitterMs = 0;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;

  constructor({ initialDelayMs = 250, maxDelayMs = 5_000 }: ReconnectBackoffOptions = {}) {
    this.initialDelayMs = initialDelayMs;
    this.maxDelayMs = Math.max(initialDelayMs, maxDelayMs);
  }

  get attemptCount(): number {
    return this.attempts;
  }

  delayMs(): number {
    const exponential = this.initialDelayMs * 2 ** Math.max(0, this.attempts - 1);
    return Math.min(this.maxDelayMs, exponential) + this.jitterMs;
  }

  attempted(): void {
    this.attempts++;
    // Up to 10 % extra, fixed until the next attempt, so instances that lost the same server spread out.
    this.jitterMs = Math.floor(Math.random() * 0.1 * Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** (this.attempts - 1)));
  }

  reset(): void {
    this.attempts = 0;
    this.jitterMs = 0;
  }
}
