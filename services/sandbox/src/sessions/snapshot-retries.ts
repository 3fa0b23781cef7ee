/**
 * When a task's idle snapshot that failed may be tried again: the first retry one backoff base
 * after the failure, each next one twice as long after the one before, at most `maxAttempts`
 * attempts in all; then none until the task is used again (`forget`), which gives it the whole
 * budget back.
 *
 * Counted in this instance's memory, not in the task's events: a restart, or another instance
 * taking the task over, starts from a fresh budget. That is bounded too (at most `maxAttempts`
 * more attempts each time), and it keeps failed attempts, which are not facts of the task, out
 * of its history.
 */
export class SnapshotRetries {
  private readonly failures = new Map<string, { readonly attempts: number; readonly retryAt: number }>();

  constructor(
    readonly maxAttempts: number,
    private readonly baseDelayMs: number,
  ) {}

  /** False while the task waits out its backoff, or once its attempts are used up. */
  mayTry(taskId: string, now: number): boolean {
    const failure = this.failures.get(taskId);
    return !failure || (failure.attempts < this.maxAttempts && now >= failure.retryAt);
  }

  /** Counts a failed attempt made at `now`: how many so far, and how long until the next may start (none when used up). */
  failed(taskId: string, now: number): { readonly attempts: number; readonly retryInMs?: number } {
    const attempts = (this.failures.get(taskId)?.attempts ?? 0) + 1;
    const retryInMs = this.baseDelayMs * 2 ** (attempts - 1);
    this.failures.set(taskId, { attempts, retryAt: now + retryInMs });
    return attempts < this.maxAttempts ? { attempts, retryInMs } : { attempts };
  }

  /** The task was used again, or its sandbox is gone: its next idle spell starts afresh. */
  forget(taskId: string): void {
    this.failures.delete(taskId);
  }
}
