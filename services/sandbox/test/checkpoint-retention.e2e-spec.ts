import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { AtsClient, TaskStreamEvent } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { startHarness } from '../../../test/support/service-harness';

// CHECKPOINT_RETENTION=last:1: only the last checkpoint of a task stays. Files as of an earlier
// step answer 404 saying why, and once the sandbox has expired its objects are collected.
// All-in-one only: it counts the objects under DATA_DIR.

jest.setTimeout(60_000);

describe('checkpoint retention and garbage collection', () => {
  let h: Harness;
  let ats: AtsClient;
  beforeAll(async () => {
    h = await startHarness({
      CHECKPOINT_RETENTION: 'last:1',
      CHECKPOINT_GC_GRACE_MS: '0',
      SANDBOX_IDLE_TTL_MS: '400',
      SANDBOX_SNAPSHOT_MAX_BYTES: String(64 * 1024),
    });
    ats = h.client();
  });
  afterAll(async () => h.close());

  const packsOf = async (taskId: string) =>
    (await readdir(join(h.dataDir, 'objects', 'keys', 'checkpoints', taskId, taskId)).catch(() => [] as string[])).filter((n) =>
      n.endsWith('.pack'),
    );

  it('answers only for the kept checkpoint, and removes the objects of the others once the sandbox expired', async () => {
    h.model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo 1 > a.txt' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo 2 > a.txt' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo 3 > a.txt' } }] },
      { text: 'done' },
    );
    const { id } = await ats.tasks.create({ message: 'three versions' });
    const events: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(id)) events.push(event);
    const results = events.filter((e) => e.type === 'tool_result').map((e) => e.id);
    expect(results).toHaveLength(3);
    expect(await packsOf(id)).toHaveLength(3);

    const old = await h.api(`/api/v1/tasks/${id}/files?at=${results[0]}`);
    expect(old.status).toBe(404);
    expect(old.body.error.message).toContain('CHECKPOINT_RETENTION');
    const kept = await h.api(`/api/v1/tasks/${id}/files?at=${results[2]}`);
    expect(kept.body.data.files.map((f: { path: string }) => f.path)).toEqual(['a.txt']);

    // Step 2's pack goes; step 1's stays, whole: it holds the empty downloads/ folder every later
    // step still shows (a pack is kept while any of its pieces is named).
    const collected = async () => !(await packsOf(id)).some((n) => n.startsWith('2-'));
    for (const until = Date.now() + 15_000; !(await collected());) {
      if (Date.now() > until) throw new Error(`step 2's pack was not collected: ${(await packsOf(id)).join(', ')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((await packsOf(id)).sort()).toEqual([expect.stringMatching(/^1-/), expect.stringMatching(/^3-/)]);
    // What is kept still reads, and a follow-up after the expiry finds the file.
    const download = await fetch(`${h.url}/api/v1/tasks/${id}/files/download?path=a.txt`, {
      headers: { authorization: `Bearer test-key-tenant-a` },
    });
    expect(await download.text()).toBe('3\n');

    // A fork needs the workspace of its fork point: refused where it is no longer kept.
    const refused = await h.api(`/api/v1/tasks/${id}/fork`, { method: 'POST', json: { afterEventId: results[0] } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('CHECKPOINT_RETENTION');
    const forked = await h.api(`/api/v1/tasks/${id}/fork`, { method: 'POST', json: { afterEventId: results[2] } });
    expect(forked.status).toBe(201);
    // The fork joined its source's tree: a member marker, so a collection keeps what it names.
    expect(await readdir(join(h.dataDir, 'objects', 'keys', 'checkpoints', id, 'members'))).toEqual([forked.body.data.id]);
  });

  it('goes on when a step is too large to checkpoint, saying so on its tool_result, and the next step compares with the last one taken', async () => {
    h.model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo small > s.txt' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'head -c 200000 /dev/urandom > big.bin' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'rm big.bin && echo more >> s.txt' } }] },
      { text: 'done' },
    );
    const { id } = await ats.tasks.create({ message: 'one step too big' });
    const events: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(id)) events.push(event);
    const results = events.flatMap((e) =>
      e.type === 'tool_result' ? [e.data as { status: string; changes?: unknown; checkpointSkipped?: string }] : [],
    );
    expect(results.map((r) => r.status)).toEqual(['success', 'success', 'success']);
    expect(results[1].checkpointSkipped).toContain('SANDBOX_SNAPSHOT_MAX_BYTES');
    expect(results[1].changes).toBeUndefined();
    // Compared with the first step's checkpoint: big.bin never was in one.
    expect(results[2].changes).toEqual([{ path: 's.txt', change: 'modified', size: 11 }]);
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
  });
});
