import { AddressRefusedError } from '@app/common';
import { runTool } from './run-tool';
import { ToolFailure } from './tool.errors';

describe('runTool', () => {
  const ctx = { workspaceRoot: '/unused' };

  it('wraps the body output in a success result', async () => {
    await expect(runTool({}, ctx, async () => 'done')).resolves.toEqual({ status: 'success', output: 'done' });
  });

  it('turns an expected failure into an error result', async () => {
    await expect(runTool({}, ctx, () => Promise.reject(new ToolFailure('too big')))).resolves.toEqual({
      status: 'error',
      output: 'too big',
    });
  });

  it('hands a refused destination to the model as it is', async () => {
    const refused = new AddressRefusedError('10.0.0.5', '10.0.0.5', 'a private address', 'WEB_FETCH_ALLOW_HOSTS');
    await expect(runTool({}, ctx, () => Promise.reject(refused))).resolves.toEqual({ status: 'error', output: refused.message });
  });

  it('describes a failed system call with the path the model sent, not the host path', async () => {
    const error = Object.assign(new Error("EACCES: permission denied, open '/data/workspaces/task_1/a.txt'"), {
      code: 'EACCES',
      syscall: 'open',
    });
    await expect(runTool({ path: 'a.txt' }, ctx, () => Promise.reject(error))).resolves.toEqual({
      status: 'error',
      output: 'permission denied on "a.txt"',
    });
  });

  it('reports a cancelled call whatever the abort reason was', async () => {
    const controller = new AbortController();
    controller.abort('task cancelled');
    const result = await runTool({}, { ...ctx, signal: controller.signal }, async () => controller.signal.throwIfAborted() as never);
    expect(result).toEqual({ status: 'error', output: 'cancelled before it finished' });
  });

  it('rethrows programming bugs instead of hiding them in a result', async () => {
    await expect(runTool({}, ctx, () => Promise.reject(new TypeError('x is undefined')))).rejects.toThrow(TypeError);
  });
});
