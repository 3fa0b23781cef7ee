import type { ExecResult } from '../provider/sandbox-provider.port';
import { shellTool } from './shell.tool';

describe('shell tool', () => {
  const run = (exec: Partial<ExecResult>) =>
    shellTool.execute(
      { command: 'x' },
      { workspaceRoot: '/unused', runCommand: async () => ({ exitCode: null, output: 'out\n', truncated: false, durationMs: 1, ...exec }) },
    );

  it('names the limit that stopped a command first, then what happened (docs/api.md: [limit hit: memory …])', async () => {
    const result = await run({ limitHit: 'memory', limitMessage: 'over 128 bytes (SANDBOX_MEMORY_BYTES)' });
    expect(result).toEqual({ status: 'error', output: 'out\n[limit hit: memory: over 128 bytes (SANDBOX_MEMORY_BYTES)]' });
    expect((await run({ limitHit: 'disk' })).output).toBe('out\n[limit hit: disk]');
  });

  it('marks a cut output without calling the command failed', async () => {
    const result = await run({ exitCode: 0, truncated: true, limitHit: 'output', limitMessage: 'cut' });
    expect(result.status).toBe('success');
    expect(result.output).toBe('out\n[output truncated: only the first part was kept (SANDBOX_MAX_OUTPUT_BYTES)]');
  });
});
