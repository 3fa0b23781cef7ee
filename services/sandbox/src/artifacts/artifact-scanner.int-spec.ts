import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { SecretVault } from '@app/common';
import type { TempWorkspace } from '@app/common/testing/temp-workspace';
import { createTempWorkspace } from '@app/common/testing/temp-workspace';
import { LocalObjectStore } from '@app/object-store/local/local-object-store';
import { ArtifactScanner, DEFAULT_SCAN_LIMITS } from './artifact-scanner';

// The scanner runs with the service's privileges over a workspace that untrusted code shaped:
// whatever the links, nothing outside downloads/ may become an artifact.

const TASK = 'task_0123456789abcdef0123456789abcdef';

describe('ArtifactScanner', () => {
  let ws: TempWorkspace;
  let objectsDir: string;
  let scanner: ArtifactScanner;
  let objects: LocalObjectStore;
  beforeEach(async () => {
    ws = await createTempWorkspace();
    objectsDir = await mkdtemp(join(tmpdir(), 'scanner-objects-'));
    objects = new LocalObjectStore(objectsDir);
    scanner = new ArtifactScanner(objects, { ...DEFAULT_SCAN_LIMITS, maxFiles: 5, maxDepth: 3 });
    await writeFile(join(ws.outside, 'shadow'), 'HOST-SECRET');
  });
  afterEach(async () => {
    await ws.cleanup();
    await rm(objectsDir, { recursive: true, force: true });
  });

  it('records the regular files under downloads/ with their content in the object store', async () => {
    await ws.file('downloads/report.md', '# hi');
    await ws.file('downloads/sub/data.csv', 'a,b');
    await ws.file('notes.txt', 'not an artifact');
    const { records, notes } = await scanner.scan(TASK, ws.root, {});
    expect(records.map((r) => [r.path, r.name, r.size, r.category])).toEqual([
      ['downloads/report.md', 'report.md', 4, 'markdown'],
      ['downloads/sub/data.csv', 'data.csv', 3, 'csv'],
    ]);
    expect(await text(await objects.get(records[0].objectKey))).toBe('# hi');
    expect(notes).toEqual([]);
  });

  it.each([
    ['an absolute link to a host folder', () => ws.link('downloads', ws.outside)],
    ['a link to /', () => ws.link('downloads', '/')],
    ['a relative link climbing out', () => ws.link('downloads', '../outside')],
    ['a link to /proc/self', () => ws.link('downloads', '/proc/self/root/etc')],
  ])('records nothing when downloads itself is %s, and says why', async (_what, make) => {
    await make();
    const { records, notes } = await scanner.scan(TASK, ws.root, {});
    expect(records).toEqual([]);
    expect(notes).toEqual(['downloads is a symlink (never followed), not a folder: nothing under it is recorded']);
  });

  it('follows no link at any level below downloads/', async () => {
    await ws.file('downloads/kept.txt', 'kept');
    await ws.link('downloads/sub', ws.outside);
    await ws.link('downloads/deeper/up', '../../../outside');
    await ws.link('downloads/shadow', join(ws.outside, 'shadow'));
    const { records, notes } = await scanner.scan(TASK, ws.root, {}, { since: 0 });
    expect(records.map((r) => r.path)).toEqual(['downloads/kept.txt']);
    expect(notes).toEqual([
      'downloads/deeper/up is a symlink (never followed): not recorded',
      'downloads/shadow is a symlink (never followed): not recorded',
      'downloads/sub is a symlink (never followed): not recorded',
    ]);
  });

  it('never opens FIFOs or sockets (a FIFO would hang the scan) and names them', async () => {
    await ws.file('downloads/kept.txt', 'kept');
    execFileSync('mkfifo', [join(ws.root, 'downloads', 'pipe')]);
    execFileSync('python3', [
      '-c',
      `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(join(ws.root, 'downloads', 'sock'))})`,
    ]);
    const { records, notes } = await scanner.scan(TASK, ws.root, {});
    expect(records.map((r) => r.path)).toEqual(['downloads/kept.txt']);
    expect(notes).toEqual(['downloads/pipe is a FIFO (named pipe): not recorded', 'downloads/sock is a socket: not recorded']);
  });

  it('masks a secret in a file name, records the file under the masked name and says so', async () => {
    const vault = new SecretVault();
    vault.put(TASK, { TOKEN: 'tok-very-secret-value' });
    await ws.file('downloads/f-tok-very-secret-value.txt', 'content');
    const { records, notes } = await scanner.scan(TASK, ws.root, {}, { redact: (t) => vault.redact(TASK, t) });
    expect(records.map((r) => [r.path, r.name])).toEqual([['downloads/f-[REDACTED:TOKEN].txt', 'f-[REDACTED:TOKEN].txt']]);
    expect(JSON.stringify({ records, notes })).not.toContain('tok-very-secret-value');
    expect(notes).toEqual(['downloads/f-[REDACTED:TOKEN].txt is recorded under this name: its real name contains a secret']);
  });

  it('lists the links that lead out of the workspace (read as text, never followed), downloads itself included', async () => {
    await ws.file('notes.txt', 'n');
    await ws.link('downloads/abs', '/etc');
    await ws.link('downloads/climb', '../../outside');
    await ws.link('downloads/sub/deep', '../../../x');
    await ws.link('downloads/inside-abs', '/workspace/notes.txt');
    await ws.link('downloads/inside-rel', '../notes.txt');
    const { escapingLinks } = await scanner.scan(TASK, ws.root, {});
    expect(escapingLinks.sort()).toEqual(['downloads/abs', 'downloads/climb', 'downloads/sub/deep']);
    await ws.cleanup();
    ws = await createTempWorkspace();
    await ws.link('downloads', '/');
    expect((await scanner.scan(TASK, ws.root, {})).escapingLinks).toEqual(['downloads']);
  });

  it('says when it stops at its bounds', async () => {
    for (let i = 0; i < 7; i++) await ws.file(`downloads/f${i}.txt`, String(i));
    await ws.file('downloads/a/b/c/d/deep.txt', 'deep');
    const { records, notes } = await scanner.scan(TASK, ws.root, {});
    expect(records).toHaveLength(5);
    expect(notes).toEqual([
      'downloads/a/b/c/d is more than 3 folders deep: not recorded',
      'more than 5 files under downloads/: the rest are not recorded',
    ]);
  });

  it('only mentions left-out entries that changed since `since`', async () => {
    await ws.link('downloads/old-link', '/etc');
    const { notes } = await scanner.scan(TASK, ws.root, {}, { since: Date.now() + 60_000 });
    expect(notes).toEqual([]);
  });
});
