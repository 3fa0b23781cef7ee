import type { DurableRunner, StepFunction, StepOutcome, TurnOf } from '../durable-runner.port';

export interface RunnerFixture {
  readonly runner: DurableRunner;
  cleanup(): Promise<void>;
}

/** A factory gets the step function, the active-task source and the turn source the runner must use. */
export type RunnerFactory = (step: StepFunction, activeTaskIds: () => string[], turnOf: TurnOf) => Promise<RunnerFixture>;

/** Every task of these tests stays on its first turn unless a test says otherwise. */
const firstTurn: TurnOf = async () => 1;

/** Every durable runner adapter's spec calls this with its own factory. */
export function describeRunnerContract(name: string, factory: RunnerFactory): void {
  describe(`DurableRunner contract: ${name}`, () => {
    let fixture: RunnerFixture | undefined;
    afterEach(async () => fixture?.cleanup());

    /** A scripted task: each step pops the next outcome; records every call. */
    const scripted = (outcomes: Record<string, StepOutcome[]>) => {
      const calls: string[] = [];
      const step: StepFunction = async (taskId) => {
        calls.push(taskId);
        await new Promise((r) => setTimeout(r, 1));
        return outcomes[taskId]?.shift() ?? 'idle';
      };
      return { calls, step };
    };

    it('resumes every active task on start and runs its steps until it is idle', async () => {
      const { calls, step } = scripted({ a: ['continue', 'continue', 'idle'], b: ['idle'] });
      fixture = await factory(step, () => ['a', 'b'], firstTurn);
      await fixture.runner.start();
      await fixture.runner.idle();
      expect(calls.filter((c) => c === 'a')).toHaveLength(3);
      expect(calls.filter((c) => c === 'b')).toHaveLength(1);
    });

    it('runs one loop per task: a notify during a step makes the loop look again instead of starting a second one', async () => {
      let concurrent = 0;
      let maxConcurrent = 0;
      let steps = 0;
      const step: StepFunction = async () => {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        await new Promise((r) => setTimeout(r, 20));
        concurrent--;
        steps++;
        return 'wait';
      };
      fixture = await factory(step, () => [], firstTurn);
      await fixture.runner.start();
      fixture.runner.notify('t');
      await new Promise((r) => setTimeout(r, 5));
      fixture.runner.notify('t');
      fixture.runner.notify('t');
      await fixture.runner.idle();
      expect(maxConcurrent).toBe(1);
      expect(steps).toBe(2);
    });

    it('looks again at a waitUntil deadline without any notify', async () => {
      const seen: number[] = [];
      const step: StepFunction = async () => {
        seen.push(Date.now());
        return seen.length === 1 ? { waitUntil: Date.now() + 150 } : 'idle';
      };
      fixture = await factory(step, () => ['t'], firstTurn);
      await fixture.runner.start();
      const until = Date.now() + 5000;
      while (seen.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      expect(seen).toHaveLength(2);
      expect(seen[1] - seen[0]).toBeGreaterThanOrEqual(140);
    });

    it('aborts the signal of a task in flight, and its loop runs no further step', async () => {
      let aborted = false;
      let steps = 0;
      let markStarted: () => void = () => undefined;
      const started = new Promise<void>((resolve) => (markStarted = resolve));
      const step: StepFunction = (_taskId, signal) =>
        new Promise((resolve) => {
          steps++;
          markStarted();
          signal.addEventListener('abort', () => {
            aborted = true;
            // A step that ignores its abort and asks to go on must not be run again.
            resolve('continue');
          });
        });
      fixture = await factory(step, () => [], firstTurn);
      await fixture.runner.start();
      fixture.runner.notify('t');
      await started;
      fixture.runner.abort('t');
      await fixture.runner.idle();
      expect(aborted).toBe(true);
      expect(steps).toBe(1);
    });

    it('carries a task from one turn to the next: a notify after the turn changed runs the new turn', async () => {
      let turn = 1;
      const ran: number[] = [];
      // A per-turn runner says which turn it runs; a step asked for a turn the task left does nothing.
      const step: StepFunction = async (_taskId, _signal, asked) => {
        if (asked !== undefined && asked !== turn) return 'idle';
        ran.push(turn);
        return 'idle';
      };
      fixture = await factory(
        step,
        () => [],
        async () => turn,
      );
      await fixture.runner.start();
      fixture.runner.notify('t');
      await fixture.runner.idle();
      turn = 2;
      fixture.runner.notify('t');
      await fixture.runner.idle();
      expect(ran).toEqual([1, 2]);
    });

    it('retries a step that threw, later', async () => {
      let attempts = 0;
      const step: StepFunction = async () => {
        attempts++;
        if (attempts === 1) throw new Error('store hiccup');
        return 'idle';
      };
      fixture = await factory(step, () => [], firstTurn);
      await fixture.runner.start();
      fixture.runner.notify('t');
      const until = Date.now() + 5000;
      while (attempts < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(attempts).toBe(2);
    });
  });
}
