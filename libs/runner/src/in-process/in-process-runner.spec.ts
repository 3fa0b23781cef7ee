import { describeRunnerContract } from '../testing/runner.contract';
import { InProcessRunner } from './in-process-runner';

describeRunnerContract('in-process', async (step, activeTaskIds) => {
  const runner = new InProcessRunner(step, activeTaskIds);
  return { runner, cleanup: () => runner.stop() };
});
