import type { DurableRunner, StepFunction } from '../durable-runner.port';

const MAX_RETRIES = 5;
/** setTimeout's largest delay (~24.8 days); a later deadline is simply looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Loop {
  controller: AbortController;
  /** Set when a notify arrives mid-step: the loop must look again before it sleeps. */
  dirty: boolean;
  done: Promise<void>;
}

/**
 * The all-in-one mode's durable runner. Durability comes from the event stream, not from this
 * class: each step re-reads the task, so after a crash `start()` simply runs the loop of every
 * task the read model still shows as active.
 */
export class InProcessRunner implements DurableRunner {
  private readonly loops = new Map<string, Loop>();
  private readonly failures = new Map<string, number>();
  /** One deadline timer per task (a step that returned `waitUntil`). */
  private readonly deadlines = new Map<string, NodeJS.Timeout>();
  private stopped = false;
  /** drain() was called: the running steps finish, no other starts. */
  private draining = false;

  constructor(
    private readonly step: StepFunction,
    private readonly activeTaskIds: () => string[],
    private readonly onError: (taskId: string, error: unknown) => void = () => undefined,
    private readonly maxStepsPerRun = 10_000,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    this.draining = false;
    for (const taskId of this.activeTaskIds()) this.notify(taskId);
  }

  notify(taskId: string): void {
    if (this.stopped || this.draining) return;
    const running = this.loops.get(taskId);
    if (running) {
      running.dirty = true;
      return;
    }
    const loop: Loop = { controller: new AbortController(), dirty: false, done: Promise.resolve() };
    this.loops.set(taskId, loop);
    loop.done = this.run(taskId, loop).finally(() => this.loops.delete(taskId));
  }

  abort(taskId: string): void {
    this.loops.get(taskId)?.controller.abort();
  }

  async idle(): Promise<void> {
    while (this.loops.size > 0) await Promise.all([...this.loops.values()].map((l) => l.done));
  }

  drain(): void {
    this.draining = true;
    for (const timer of this.deadlines.values()) clearTimeout(timer);
    this.deadlines.clear();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.deadlines.values()) clearTimeout(timer);
    this.deadlines.clear();
    for (const loop of this.loops.values()) loop.controller.abort();
    await Promise.all([...this.loops.values()].map((l) => l.done));
  }

  /** The deadline lives only in memory: after a restart `start()` runs the step, which computes it again from the events. */
  private wakeAt(taskId: string, at: number): void {
    clearTimeout(this.deadlines.get(taskId));
    const delay = Math.min(Math.max(0, at - Date.now()), MAX_TIMER_MS);
    const timer = setTimeout(() => {
      this.deadlines.delete(taskId);
      this.notify(taskId);
    }, delay);
    timer.unref();
    this.deadlines.set(taskId, timer);
  }

  /** A failed step (store hiccup, bug) is retried with backoff a few times, then left for restart. */
  private retryLater(taskId: string, error: unknown): void {
    const failures = (this.failures.get(taskId) ?? 0) + 1;
    this.failures.set(taskId, failures);
    this.onError(taskId, error);
    if (failures > MAX_RETRIES) return;
    setTimeout(() => this.notify(taskId), 200 * 2 ** failures).unref();
  }

  private async run(taskId: string, loop: Loop): Promise<void> {
    await Promise.resolve(); // let notify() return before the first step starts
    for (let steps = 0; steps < this.maxStepsPerRun && !this.stopped && !this.draining; steps++) {
      loop.dirty = false;
      let outcome;
      try {
        outcome = await this.step(taskId, loop.controller.signal);
      } catch (error) {
        if (!loop.controller.signal.aborted) {
          this.retryLater(taskId, error);
          return;
        }
        outcome = 'idle' as const; // a step may throw on its abort
      }
      this.failures.delete(taskId);
      // Aborted (the task was cancelled): the loop ends, unless new work was notified meanwhile.
      if (loop.controller.signal.aborted) {
        if (!loop.dirty) return;
        loop.controller = new AbortController();
        continue;
      }
      if (typeof outcome === 'object') this.wakeAt(taskId, outcome.waitUntil);
      if (outcome !== 'continue' && !loop.dirty) return;
    }
  }
}
