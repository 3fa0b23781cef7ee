import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Harness } from '../../../test/support/service-harness';
import { API_KEY, OTHER_API_KEY, startHarness } from '../../../test/support/service-harness';
import type { SseEvent } from '../../../test/support/sse-client';
import { followStream } from '../../../test/support/sse-client';
import { buildPreloadLibrary, preloadReports } from './escape/host-probes';

// The second attack run, through the whole service (and, in e2e-distributed, two sandbox
// instances over NATS): a task's loader variables (as env, and as a secret) reaching a root
// launcher, the disk quota, memory and processes bounded per task, uids shared between tenants,
// host paths in mountinfo. The escape suite (test/escape/task-bounds) has each one in detail.

const MiB = 1024 * 1024;
const LIMITS = { memory: 128 * MiB, disk: 64 * MiB, processes: 64 };

jest.setTimeout(90_000);

describe('bounds per task and no privilege within reach (bubblewrap, whole service)', () => {
  let h: Harness;
  let library: Buffer;
  let buildDir: string;
  beforeAll(async () => {
    buildDir = await mkdtemp(join(tmpdir(), 'ats-preload-'));
    library = await readFile(await buildPreloadLibrary(buildDir));
    h = await startHarness({
      SANDBOX_MEMORY_BYTES: String(LIMITS.memory),
      SANDBOX_DISK_QUOTA_BYTES: String(LIMITS.disk),
      SANDBOX_MAX_PROCESSES: String(LIMITS.processes),
      SANDBOX_TIMEOUT_MS: '20000',
    });
  });
  afterAll(async () => {
    await h.close();
    await rm(buildDir, { recursive: true, force: true });
  });

  const shell = (command: string) => ({ toolCalls: [{ name: 'shell', arguments: { command } }] });

  /** A task that runs `commands` in turn (with the library uploaded as x.so), followed to its end. */
  async function runTask(
    commands: string[],
    fields: Record<string, unknown> = {},
    key = API_KEY,
  ): Promise<{ id: string; events: SseEvent[] }> {
    h.model.script(...commands.map(shell), { text: 'done' });
    return startTask(fields, key);
  }

  /** Creates a task (the model's replies scripted by the caller) and follows it to its end. */
  async function startTask(fields: Record<string, unknown> = {}, key = API_KEY): Promise<{ id: string; events: SseEvent[] }> {
    const form = new FormData();
    form.set('message', 'run it');
    for (const [name, value] of Object.entries(fields)) form.set(name, JSON.stringify(value));
    form.append('files', new Blob([new Uint8Array(library)]), 'x.so');
    const res = await fetch(`${h.url}/api/v1/tasks`, { method: 'POST', body: form, headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { data: { id: string } }).data.id;
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, key, { kinds: ['tool_result', 'done'], timeoutMs: 60_000 });
    return { id, events };
  }
  const outputs = (events: SseEvent[]) => events.filter((e) => e.kind === 'tool_result').map((e) => String(e.payload.data.output));

  it.each([
    ['env', { env: { LD_PRELOAD: '/workspace/x.so', GLIBC_TUNABLES: 'glibc.malloc.check=3' } }],
    ['a secret', { secrets: { LD_PRELOAD: '/workspace/x.so' } }],
  ])('LD_PRELOAD of an uploaded library, given as %s: only unprivileged processes of the task load it', async (_given, fields) => {
    const { events } = await runTask(['id -u; /usr/bin/true'], fields);
    const [output] = outputs(events);
    const uid = Number(output.split('\n').find((line) => /^\d+$/.test(line)));
    const reports = preloadReports(output);
    // Set up: the library was loaded, by the shell and the program it ran.
    expect(reports.map((r) => r.exe)).toEqual(expect.arrayContaining(['/usr/bin/bash', '/usr/bin/true']));
    expect(uid).toBeGreaterThan(0);
    for (const report of reports) {
      expect(report).toMatchObject({ uid, euid: uid, caps: '0000000000000000' });
      expect(report.corePattern).toMatch(/Permission denied|Read-only file system/);
    }
  });

  it('disk: parallel fallocate past the quota leaves the workspace within it, and the result says [limit hit: disk]', async () => {
    const each = Math.floor(LIMITS.disk * 0.4);
    const { events } = await runTask([
      `for i in 1 2 3 4 5 6; do (echo "started $i"; fallocate -l ${each} f$i 2>&1 || echo "refused $i") & done; wait; echo "used=$(df -B1 --output=used . | tail -1 | tr -d ' ')"`,
    ]);
    const [output] = outputs(events);
    expect(output.match(/^started \d$/gm)).toHaveLength(6);
    expect(output).toContain('[limit hit: disk: the workspace is full');
    expect(Number(/^used=(\d+)$/m.exec(output)?.[1])).toBeLessThanOrEqual(LIMITS.disk);
  });

  it('memory: four processes that each fit alone, together over SANDBOX_MEMORY_BYTES: the command is stopped', async () => {
    const each = Math.floor((LIMITS.memory * 0.4) / MiB);
    const { events } = await runTask([
      `for i in 1 2 3 4; do (echo "started $i"; (head -c ${each}M /dev/zero; sleep 3) | tail > /dev/null; echo "done $i") & done; wait; echo finished`,
    ]);
    const [output] = outputs(events);
    expect(output.match(/^started \d$/gm)).toHaveLength(4);
    expect(output).toContain("[limit hit: memory: the task's processes together");
    expect(output).not.toContain('finished');
  });

  it('processes: at most SANDBOX_MAX_PROCESSES at once; another tenant runs meanwhile', async () => {
    // One scripted model for both: replies go in the order the two tasks ask for them.
    h.model.script(shell('for i in $(seq 1 100); do (echo "up $i"; exec sleep 4) 2>/dev/null & done 2>/dev/null; sleep 3.5; echo filled'));
    const filling = startTask();
    await new Promise((r) => setTimeout(r, 1500));
    h.model.script(shell('for i in 1 2 3; do /usr/bin/true; done; echo other-ran'), { text: 'done' }, { text: 'done' });
    const other = await startTask({}, OTHER_API_KEY);
    expect(outputs(other.events)[0]).toBe('other-ran\n');
    const [output] = outputs((await filling).events);
    const started = output.match(/^up \d+$/gm)?.length ?? 0;
    expect(started).toBeGreaterThan(LIMITS.processes / 2);
    expect(started).toBeLessThanOrEqual(LIMITS.processes);
    expect(output).toContain('[limit hit: processes: could not start more processes');
  });

  it('uids: every live task its own, whichever instance runs it; mountinfo shows no host path or task id', async () => {
    // One after another, all alive at the end (a workspace lives until SANDBOX_IDLE_TTL_MS).
    const tasks: { id: string; events: SseEvent[] }[] = [];
    for (let i = 0; i < 6; i++)
      tasks.push(await runTask(['id -u; grep " /workspace " /proc/self/mountinfo'], {}, i % 2 ? OTHER_API_KEY : API_KEY));
    const uids = tasks.map(({ events }) => outputs(events)[0].split('\n')[0]);
    for (const uid of uids) expect(uid).toMatch(/^\d+$/);
    expect(new Set(uids).size).toBe(uids.length);
    for (const { id, events } of tasks) {
      const mountLine = outputs(events)[0].split('\n')[1];
      expect(mountLine).toMatch(/ \/ \/workspace /);
      expect(mountLine).not.toContain(id);
      expect(mountLine).not.toContain(h.dataDir);
    }
  });
});
