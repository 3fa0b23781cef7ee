import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Harness, startHarness } from '../../../test/support/service-harness';
import { followStream } from '../../../test/support/sse-client';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { writeZip } from '../../sandbox/src/uploads/testing/zip-fixtures';

describe('Multipart create with files', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness({ UPLOAD_MAX_BYTES: '4096' })));
  afterAll(async () => h.close());

  const post = (form: FormData) =>
    fetch(`${h.url}/api/v1/tasks`, { method: 'POST', body: form, headers: { authorization: 'Bearer test-key-tenant-a' } });

  it('puts uploaded files at the workspace root where the agent can read them', async () => {
    h.model.script({ toolCalls: [{ name: 'read_file', arguments: { path: 'data.csv' } }] }, { text: 'read it' });
    const form = new FormData();
    form.append('message', 'read data.csv');
    form.append('env', JSON.stringify({ MODE: 'test' }));
    form.append('files', new Blob(['a,b\n1,2\n']), 'data.csv');
    const res = await post(form);
    expect(res.status).toBe(201);
    const id = ((await res.json()) as any).data.id;
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a');
    expect(events.find((e) => e.kind === 'tool_result')!.payload.data.output).toContain('a,b');
    const view = (await h.api(`/api/v1/tasks/${id}`)).body.data;
    expect(view.files).toEqual([{ name: 'data.csv', size: 8 }]);
    expect(view.envKeys).toEqual(['MODE']);
    expect(await readFile(join(h.dataDir, 'workspaces', id, 'data.csv'), 'utf8')).toBe('a,b\n1,2\n');
  });

  it('answers 413 PAYLOAD_TOO_LARGE past UPLOAD_MAX_BYTES and creates nothing', async () => {
    const before = (await h.api('/api/v1/tasks?includeHidden=true&limit=100')).body.data.tasks.length;
    const form = new FormData();
    form.append('message', 'too big');
    form.append('files', new Blob([Buffer.alloc(10_000, 1)]), 'big.bin');
    const res = await post(form);
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error.code).toBe('PAYLOAD_TOO_LARGE');
    const after = (await h.api('/api/v1/tasks?includeHidden=true&limit=100')).body.data.tasks.length;
    expect(after).toBe(before);
  });

  it('rejects bad multipart fields with VALIDATION_ERROR', async () => {
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
  const taskCount = async () => (await h.api('/api/v1/tasks?includeHidden=true&limit=100')).body.data.tasks.length;

  it('extracts an uploaded .zip at the workspace root, keeping its folders', async () => {
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'cat src/app/main.py && ls' } }] }, { text: 'ok' });
    const form = new FormData();
    form.append('message', 'look at the project');
    form.append(
      'files',
      await zipBlob([
        { name: 'src/app/main.py', content: 'print("zip")' },
        { name: 'README.md', content: '# r' },
      ]),
      'project.zip',
    );
    const res = await post(form);
    expect(res.status).toBe(201);
    const id = ((await res.json()) as any).data.id;
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a', { timeoutMs: 20_000 });
    expect(events.find((e) => e.kind === 'tool_result')!.payload.data.output).toBe('print("zip")README.md\nsrc\n');
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
      const form = new FormData();
      form.append('message', label);
      form.append('files', blob, `${label}.zip`);
      const res = await post(form);
      const body = (await res.json()) as any;
      expect({ label, status: res.status, success: body.success, code: body.error.code }).toEqual({
        label,
        status,
        success: false,
        code: status === 400 ? 'VALIDATION_ERROR' : 'PAYLOAD_TOO_LARGE',
      });
      expect(body.error.message).toContain(`${label}.zip`);
    }
    expect(await taskCount()).toBe(before);
    const workspacesAfter: string[] = await readdir(join(h.dataDir, 'workspaces')).catch(() => []);
    for (const ws of workspacesAfter.filter((w) => !workspacesBefore.includes(w))) {
      expect(await readdir(join(h.dataDir, 'workspaces', ws))).toEqual([]);
    }
  });
});
