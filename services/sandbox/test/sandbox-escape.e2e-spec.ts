import type { Harness } from '../../../test/support/service-harness';
import { API_KEY, OTHER_API_KEY, startHarness, waitFor } from '../../../test/support/service-harness';
import type { SseEvent } from '../../../test/support/sse-client';
import { followStream } from '../../../test/support/sse-client';
import { workspaceMountPoint } from '../src/provider/bubblewrap/host/workspace-volumes';

// The attack run's critical finding, through the whole service: one shell step that links
// downloads/ somewhere else must never turn the host's files or another tenant's workspace into
// this task's artifacts, and a secret in a file name must not leak through the artifact records.

const KINDS = ['tool_result', 'artifact', 'done'];
const CANARY = 'cnry-7f3a-OTHER-TENANT-FILE';
const SECRET = 'tok-5e1c2b9a-FILE-NAME-SECRET';

jest.setTimeout(60_000);

describe('escapes through artifacts (bubblewrap, whole service)', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(async () => h.close());

  const runTask = async (
    commands: string[],
    key = API_KEY,
    body: Record<string, unknown> = {},
  ): Promise<{ id: string; events: SseEvent[] }> => {
    h.model.script(...commands.map((command) => ({ toolCalls: [{ name: 'shell', arguments: { command } }] })), { text: 'done' });
    const res = await h.api('/api/v1/tasks', { method: 'POST', key, json: { message: 'run it', ...body } });
    expect(res.status).toBe(201);
    const id = res.body.data.id as string;
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, key ?? API_KEY, { kinds: KINDS, timeoutMs: 30_000 });
    return { id, events };
  };
  const artifactEvents = (events: SseEvent[]) => events.filter((e) => e.kind === 'artifact').map((e) => e.payload.data);
  const outputs = (events: SseEvent[]) => events.filter((e) => e.kind === 'tool_result').map((e) => String(e.payload.data.output));
  const download = (id: string, path: string, key = API_KEY) =>
    fetch(`${h.url}/api/v1/tasks/${id}/artifacts/download?path=${encodeURIComponent(path)}`, {
      headers: { authorization: `Bearer ${key}` },
    });

  it('records nothing of the host when downloads is a link to /etc, and refuses a download through it as outside the workspace', async () => {
    const { id, events } = await runTask(['rm -rf downloads; ln -s /etc downloads && ls downloads/ | head -3']);
    expect(artifactEvents(events)).toEqual([]);
    expect(outputs(events)[0]).toContain(
      '[artifacts: downloads is a symlink (never followed), not a folder: nothing under it is recorded]',
    );
    expect((await h.api(`/api/v1/tasks/${id}/artifacts`)).body).toEqual({ files: [] });
    for (const path of ['downloads/shadow', 'downloads/passwd', 'downloads/hostname']) {
      const res = await download(id, path);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(((await res.json()) as { error: unknown }).error).toEqual({
        code: 'VALIDATION_ERROR',
        message: `path "${path}" is outside the workspace: downloads is a symlink leading out of it`,
      });
    }
  });

  it("records nothing of another tenant's workspace when downloads links to it", async () => {
    const other = await runTask([`mkdir -p downloads && echo ${CANARY} > downloads/secret.txt`], OTHER_API_KEY);
    expect(artifactEvents(other.events)).toHaveLength(1);
    // mountinfo no longer shows a workspace's host path, but the layout is documented: aim at the other task's mount.
    const target = `${workspaceMountPoint({ dataDir: h.dataDir, runtimeDir: '/run/agentic-task-service' }, other.id)}/downloads`;
    const link = `rm -rf downloads; ln -s ${target} downloads; echo "linked to $(readlink downloads)"`;
    const { id, events } = await runTask([link, 'cat downloads/secret.txt; ls -la downloads/ 2>&1 | head -2']);
    expect(outputs(events)[0]).toContain(`linked to ${target}`);
    expect(outputs(events).join('\n')).not.toContain(CANARY);
    expect(artifactEvents(events)).toEqual([]);
    expect((await h.api(`/api/v1/tasks/${id}/artifacts`)).body).toEqual({ files: [] });
    expect((await download(id, 'downloads/secret.txt')).status).toBe(400);
  });

  it('masks a secret in a file name in the artifact event, the listing and the download headers', async () => {
    const { id, events } = await runTask(['mkdir -p downloads && echo report > "downloads/f-$TOKEN.txt"'], API_KEY, {
      secrets: { TOKEN: SECRET },
    });
    const masked = 'downloads/f-[REDACTED:TOKEN].txt';
    expect(artifactEvents(events)).toEqual([expect.objectContaining({ path: masked, name: 'f-[REDACTED:TOKEN].txt', status: 'recorded' })]);
    expect(JSON.stringify(events)).not.toContain(SECRET);
    const list = await waitFor(async () => {
      const body = (await h.api(`/api/v1/tasks/${id}/artifacts`)).body;
      return body.files?.length === 1 ? body : undefined;
    });
    expect(list.files[0].path).toBe(masked);
    const res = await download(id, masked);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).not.toContain(SECRET);
    expect(res.headers.get('content-disposition')).toContain(encodeURIComponent('f-[REDACTED:TOKEN].txt'));
    expect(await res.text()).toBe('report\n');
  });

  it('serves the recorded bytes, never a host file, when a recorded file is swapped for a link', async () => {
    const { id, events } = await runTask([
      'mkdir -p downloads && echo original > downloads/r.txt',
      'rm downloads/r.txt && ln -s /etc/passwd downloads/r.txt',
    ]);
    expect(artifactEvents(events)).toEqual([
      expect.objectContaining({ path: 'downloads/r.txt', status: 'recorded' }),
      expect.objectContaining({ path: 'downloads/r.txt', status: 'removed' }),
    ]);
    // The name now is a link leading out of the workspace: outside, never the host file.
    expect((await download(id, 'downloads/r.txt')).status).toBe(400);
  });

  it('cannot hard-link a host file into downloads', async () => {
    const { id, events } = await runTask([
      'mkdir -p downloads && ln /etc/passwd downloads/passwd; ln /usr/bin/bash downloads/bash; echo "rc=$?"',
    ]);
    expect(outputs(events)[0]).toMatch(/Invalid cross-device link|Operation not permitted/);
    expect(artifactEvents(events)).toEqual([]);
    expect((await download(id, 'downloads/passwd')).status).toBe(404);
  });
});
