import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AtsClient, TaskStreamEvent } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { startHarness } from '../../../test/support/service-harness';
import type { SandboxProvider } from '../src/provider/sandbox-provider.port';
import { SANDBOX_PROVIDER } from '../src/provider/sandbox-provider.port';

// A workspace gone with no snapshot of it (its disk lost, its instance dead: the distributed suite
// kills one) comes back from the task's last checkpoint on the next command: every file as the
// last tool_result left it. All-in-one only: it reaches into the process to lose the workspace.

jest.setTimeout(60_000);

describe('a lost workspace comes back from its last checkpoint', () => {
  let h: Harness;
  let ats: AtsClient;
  beforeAll(async () => {
    h = await startHarness();
    ats = h.client();
  });
  afterAll(async () => h.close());

  const followTurn = async (id: string, after?: number): Promise<TaskStreamEvent[]> => {
    const events: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(id, after === undefined ? {} : { after })) events.push(event);
    return events;
  };

  it('restores every file, folder, mode and link of the last step, and nothing of a later unrecorded state', async () => {
    h.model.script(
      {
        toolCalls: [
          {
            name: 'shell',
            arguments: {
              command:
                'mkdir -p src/deep && echo kept > src/deep/file.txt && printf "#!/bin/sh\\necho ran\\n" > run.sh && chmod 755 run.sh && ln -s src/deep/file.txt link',
            },
          },
        ],
      },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.md', content: 'second step' } }] },
      { text: 'written' },
    );
    const { id } = await ats.tasks.create({ message: 'write files' });
    await followTurn(id);
    const provider = h.app.get<SandboxProvider>(SANDBOX_PROVIDER);
    expect(await provider.exists(id)).toBe(true);
    await provider.destroy(id);
    expect(await provider.exists(id)).toBe(false);

    h.model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'cat src/deep/file.txt notes.md link; echo; ./run.sh; stat -c %a run.sh' } }] },
      { text: 'read' },
    );
    const last = (await h.api(`/api/v1/tasks/${id}`)).body.data.lastEventId as number;
    await ats.tasks.sendMessage(id, 'read it back');
    const events = await followTurn(id, last);
    const result = events.find((e) => e.type === 'tool_result')?.data as { status: string; output: string; changes?: unknown };
    expect(result).toMatchObject({ status: 'success', output: 'kept\nsecond stepkept\n\nran\n755\n' });
    // Brought back as it was: the restore itself is no change of the step.
    expect(result.changes).toBeUndefined();
  });

  it('does not take an older copy of the workspace left on this disk for the current one', async () => {
    // As on an instance that held the task, lost it to another one that went on with it, and got it
    // back: its disk still has the workspace (and its mark) as they were when it let go.
    h.model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'one' } }] }, { text: 'one' });
    const { id } = await ats.tasks.create({ message: 'write one' });
    await followTurn(id);
    const markPath = join(h.dataDir, 'workspaces', '.checkpoint-marks', `${id}.json`);
    const markThen = readFileSync(markPath);
    expect(JSON.parse(markThen.toString())).toMatchObject({ seq: expect.any(Number), root: expect.stringMatching(/^[0-9a-f]{64}$/) });

    h.model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'two' } }] }, { text: 'two' });
    let last = (await h.api(`/api/v1/tasks/${id}`)).body.data.lastEventId as number;
    await ats.tasks.sendMessage(id, 'write two');
    await followTurn(id, last);
    const workspace = h.app.get<SandboxProvider>(SANDBOX_PROVIDER).workspacePath(id);
    writeFileSync(join(workspace, 'a.txt'), 'one');
    writeFileSync(markPath, markThen);

    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'cat a.txt' } }] }, { text: 'read' });
    last = (await h.api(`/api/v1/tasks/${id}`)).body.data.lastEventId as number;
    await ats.tasks.sendMessage(id, 'read it');
    const events = await followTurn(id, last);
    const result = events.find((e) => e.type === 'tool_result')?.data as { status: string; output: string; changes?: unknown };
    expect(result).toMatchObject({ status: 'success', output: 'two' });
    expect(result.changes).toBeUndefined();
  });
});
