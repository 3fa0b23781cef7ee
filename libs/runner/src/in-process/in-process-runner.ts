import { DurableRunner, StepFunction } from '../durable-runner.port';

const MAX_RETRIES = 5;

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
  private stopped = false;

  constructor(
    private readonly step: StepFunction,
    private readonly activeTaskIds: () => string[],
    private readonly onError: (taskId: string, error: unknown) => void = () => undefined,
    private readonly maxStepsPerRun = 10_000,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    for (const taskId of this.activeTaskIds()) this.notify(taskId);
  }

  notify(taskId: string): void {
    if (this.stopped) return;
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

  async stop(): Promise<void> {
    this.stopped = true;
    for (const loop of this.loops.values()) loop.controller.abort();
    await Promise.all([...this.loops.values()].map((l) => l.done));
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
    for (let steps = 0; steps < this.maxStepsPerRun && !this.stopped; steps++) {
      loop.dirty = false;
      let outcome;
      try {
        if (loop.controller.signal.aborted) loop.controller = new AbortController();
        outcome = await this.step(taskId, loop.controller.signal);
      } catch (error) {
        this.retryLater(taskId, error);
        return;
      }
      this.failures.delete(taskId);
      if (outcome !== 'continue' && !loop.dirty) return;
    }
  }
}
