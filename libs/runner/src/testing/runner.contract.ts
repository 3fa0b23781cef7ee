import { DurableRunner, StepFunction, StepOutcome } from '../durable-runner.port';

export interface RunnerFixture {
  readonly runner: DurableRunner;
  cleanup(): Promise<void>;
}

/** A factory gets the step function and the active-task source the runner must use. */
export type RunnerFactory = (step: StepFunction, activeTaskIds: () => string[]) => Promise<RunnerFixture>;

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
      fixture = await factory(step, () => ['a', 'b']);
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
      fixture = await factory(step, () => []);
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
      fixture = await factory(step, () => ['t']);
      await fixture.runner.start();
      const until = Date.now() + 5000;
      while (seen.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      expect(seen).toHaveLength(2);
      expect(seen[1] - seen[0]).toBeGreaterThanOrEqual(140);
    });

    it('aborts the signal of a task in flight', async () => {
      let aborted = false;
      const step: StepFunction = (_taskId, signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve('idle');
          });
        });
      fixture = await factory(step, () => []);
      await fixture.runner.start();
      fixture.runner.notify('t');
      await new Promise((r) => setTimeout(r, 10));
      fixture.runner.abort('t');
      await fixture.runner.idle();
      expect(aborted).toBe(true);
    });

    it('retries a step that threw, later', async () => {
      let attempts = 0;
      const step: StepFunction = async () => {
        attempts++;
        if (attempts === 1) throw new Error('store hiccup');
        return 'idle';
      };
      fixture = await factory(step, () => []);
      await fixture.runner.start();
      fixture.runner.notify('t');
      const until = Date.now() + 5000;
      while (attempts < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(attempts).toBe(2);
    });
  });
}
