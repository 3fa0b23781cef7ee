import { readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AtsClient, TaskStreamEvent } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { startHarness } from '../../../test/support/service-harness';
import { writeZip } from '../../sandbox/src/uploads/testing/zip-fixtures';
import { workspaceOf } from '../../../test/support/workspaces';

// Uploads through the typed client's multipart create; raw multipart only for text fields of the
// wrong type, which the client cannot send.

describe('Multipart create with files', () => {
  let h: Harness;
  let ats: AtsClient;
  beforeAll(async () => {
    h = await startHarness({ UPLOAD_MAX_BYTES: '4096' });
    ats = h.client();
  });
  afterAll(async () => h.close());

  const post = (form: FormData) =>
    fetch(`${h.url}/api/v1/tasks`, { method: 'POST', body: form, headers: { authorization: 'Bearer test-key-tenant-a' } });
  /** The output of the turn's first tool call, once the turn is done. */
  const firstToolOutput = async (id: string) => {
    const events: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(id)) events.push(event);
    const result = events.find((e) => e.type === 'tool_result');
    expect(result?.type).toBe('tool_result');
    return result?.type === 'tool_result' ? result.data.output : undefined;
  };
  const taskCount = async () => (await ats.tasks.listPage({ includeHidden: true, limit: 100 })).tasks.length;

  it('puts uploaded files at the workspace root where the agent can read them', async () => {
    h.model.script({ toolCalls: [{ name: 'read_file', arguments: { path: 'data.csv' } }] }, { text: 'read it' });
    const { id } = await ats.tasks.create({
      message: 'read data.csv',
      env: { MODE: 'test' },
      files: [{ name: 'data.csv', content: 'a,b\n1,2\n' }],
    });
    expect(await firstToolOutput(id)).toContain('a,b');
    const view = await ats.tasks.get(id);
    expect(view.files).toEqual([{ name: 'data.csv', size: 8 }]);
    expect(view.envKeys).toEqual(['MODE']);
    expect(await readFile(join(workspaceOf(h.dataDir, id), 'data.csv'), 'utf8')).toBe('a,b\n1,2\n');
  });

  it('answers 413 PAYLOAD_TOO_LARGE past UPLOAD_MAX_BYTES and creates nothing', async () => {
    const before = await taskCount();
    const tooBig = ats.tasks.create({ message: 'too big', files: [{ name: 'big.bin', content: Buffer.alloc(10_000, 1) }] });
    await expect(tooBig).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    expect(await taskCount()).toBe(before);
  });

  it('rejects bad multipart fields with VALIDATION_ERROR', async () => {
    // Text fields that are not what their type says: the typed client cannot send these.
    for (const [field, value] of [
      ['autoExecute', 'yes'],
      ['secrets', '{not json'],
      ['env', '"text"'],
    ]) {
      const form = new FormData();
      form.append('message', 'x');
      form.append(field, value);
      const res = await post(form);
      expect({ field, status: res.status }).toEqual({ field, status: 400 });
      expect(((await res.json()) as any).error.message).toContain(field);
    }
  });

  const zipBlob = async (entries: Parameters<typeof writeZip>[1], swaps?: Record<string, string>) => {
    const path = join(tmpdir(), `ats-upload-${Date.now()}-${Math.random()}.zip`);
    await writeZip(path, entries, swaps);
    return new Blob([await readFile(path)]);
  };

  it('extracts an uploaded .zip at the workspace root, keeping its folders', async () => {
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'cat src/app/main.py && ls' } }] }, { text: 'ok' });
    const project = await zipBlob([
      { name: 'src/app/main.py', content: 'print("zip")' },
      { name: 'README.md', content: '# r' },
    ]);
    const { id } = await ats.tasks.create({ message: 'look at the project', files: [{ name: 'project.zip', content: project }] });
    // downloads/ is in every new workspace.
    expect(await firstToolOutput(id)).toBe('print("zip")README.md\ndownloads\nsrc\n');
  });

  it('refuses zip slip, symlinks and zip bombs in the contract shape, and creates nothing', async () => {
    const before = await taskCount();
    const workspacesBefore: string[] = await readdir(join(h.dataDir, 'workspaces')).catch(() => []);
    const cases: Array<[string, Blob, number]> = [
      ['slip', await zipBlob([{ name: '@@/@@/evil.sh', content: 'x' }]), 400],
      ['symlink', await zipBlob([{ name: 'link', content: '/etc/shadow', mode: 0o120777 }]), 400],
      ['bomb', await zipBlob([{ name: 'zeros.bin', content: Buffer.alloc(2 * 1024 * 1024) }]), 413],
    ];
    for (const [label, blob, status] of cases) {
      const error = await ats.tasks.create({ message: label, files: [{ name: `${label}.zip`, content: blob }] }).catch((e: unknown) => e);
      expect({ label, error }).toMatchObject({
        label,
        error: {
          status,
          code: status === 400 ? 'VALIDATION_ERROR' : 'PAYLOAD_TOO_LARGE',
          message: expect.stringContaining(`${label}.zip`),
        },
      });
    }
    expect(await taskCount()).toBe(before);
    const workspacesAfter: string[] = await readdir(join(h.dataDir, 'workspaces')).catch(() => []);
    // Each workspace is an image (DATA_DIR/workspaces/<taskId>) mounted where workspaceOf says.
    for (const ws of workspacesAfter.filter((w) => !workspacesBefore.includes(w) && /^task_[0-9a-f]+$/.test(w))) {
      expect(await readdir(workspaceOf(h.dataDir, ws))).toEqual(['downloads']); // as every new workspace starts
    }
  });
});
