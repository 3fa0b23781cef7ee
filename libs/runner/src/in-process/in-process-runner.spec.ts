import { describeRunnerContract } from '../testing/runner.contract';
import { InProcessRunner } from './in-process-runner';

describeRunnerContract('in-process', async (step, activeTaskIds) => {
  const runner = new InProcessRunner(step, activeTaskIds);
  return { runner, cleanup: () => runner.stop() };
});

describe('InProcessRunner.drain (the first step of a shutdown)', () => {
  it('lets the running step finish, starts no other, and ignores notifications from then on', async () => {
    const calls: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const runner = new InProcessRunner(
      async (taskId) => {
        calls.push(taskId);
        if (calls.length === 1) await released; // a tool call the sandbox lets finish in its grace time
        return 'continue';
      },
      () => ['a'],
    );
    await runner.start();
    await new Promise((r) => setTimeout(r, 10));
    expect(calls).toEqual(['a']);

    runner.drain();
    runner.notify('b');
    release();
    await runner.idle();
    expect(calls).toEqual(['a']); // 'a' would have gone on ('continue'), 'b' would have started
    await runner.stop();
  });

  it('starts again on start(): the tasks left are resumed from the events', async () => {
    const calls: string[] = [];
    const runner = new InProcessRunner(
      async (taskId) => {
        calls.push(taskId);
        return 'idle';
      },
      () => ['a'],
    );
    runner.drain();
    await runner.start();
    await runner.idle();
    expect(calls).toEqual(['a']);
    await runner.stop();
  });
});
