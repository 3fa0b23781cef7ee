import { execFileSync } from 'node:child_process';
import { access, mkdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { Header } from 'tar';
import { SecretVault } from '@app/common';
import { ArtifactScanner } from '../../src/artifacts/artifact-scanner';
import type { EscapeFixture } from './escape-fixture';
import { CANARIES, startEscapeFixture } from './escape-fixture';

// Sandbox escape suite, part 1: what the SERVICE reads or writes in a workspace that untrusted
// code shaped. The service runs as root, so any link it followed would hand the task a host file
// or another tenant's. Numbered like the list in docs/operations/security.md ("Isolation (the sandbox)") and the closing note;
// part 2 (sandbox-walls.escape.int-spec.ts) tries to break out of the sandbox itself.

jest.setTimeout(60_000);

describe('escape suite, part 1: the service reading a hostile workspace', () => {
  let f: EscapeFixture;
  beforeEach(async () => (f = await startEscapeFixture()));
  afterEach(async () => f.close());

  const expectNothingLeaked = (texts: string[]) => {
    for (const canary of CANARIES) expect(texts.join('\n')).not.toContain(canary);
    expect(texts.join('\n')).not.toMatch(/^root:[^:]*:\d+:/m);
  };
  const scanRecordsNothing = async () => {
    const { records, contents } = await f.scan();
    expect(records).toEqual([]);
    expectNothingLeaked(contents);
  };

  it('01. downloads → /etc (absolute link): nothing recorded', async () => {
    expect((await f.run('rm -rf downloads; ln -s /etc downloads && readlink downloads')).output).toBe('/etc\n');
    await scanRecordsNothing();
  });

  it('02. downloads → / : nothing recorded', async () => {
    expect((await f.run('rm -rf downloads; ln -s / downloads && readlink downloads')).output).toBe('/\n');
    await scanRecordsNothing();
  });

  it('03. downloads → ../../.. (relative link climbing to DATA_DIR): nothing recorded', async () => {
    expect((await f.run('rm -rf downloads; ln -s ../../.. downloads && readlink downloads')).output).toBe('../../..\n');
    await scanRecordsNothing();
  });

  it("04. downloads → /proc/self/root/etc (the service's own /proc as the scanner sees it): nothing recorded", async () => {
    expect((await f.run('rm -rf downloads; ln -s /proc/self/root/etc downloads && readlink downloads')).output).toBe(
      '/proc/self/root/etc\n',
    );
    await scanRecordsNothing();
  });

  it("05. downloads → another task's workspace, by its host mount path (mountinfo no longer shows it; the layout is documented): nothing recorded", async () => {
    const result = await f.run(`rm -rf downloads; ln -s ${f.provider.workspacePath(f.other)}/downloads downloads && readlink downloads`);
    expect(result.output).toBe(`${f.provider.workspacePath(f.other)}/downloads\n`);
    await scanRecordsNothing();
  });

  it('06. downloads/sub → a host folder (a link below downloads): nothing recorded', async () => {
    await f.run(`mkdir -p downloads && ln -s ${f.hostDir} downloads/sub && ln -s / downloads/root && echo mine > downloads/mine.txt`);
    const { records, contents, notes } = await f.scan();
    expect(records.map((r) => r.path)).toEqual(['downloads/mine.txt']);
    expectNothingLeaked(contents);
    expect(notes).toEqual([
      'downloads/root is a symlink (never followed): not recorded',
      'downloads/sub is a symlink (never followed): not recorded',
    ]);
  });

  it('07. downloads/file → a host file (/etc/shadow, a host canary): nothing recorded', async () => {
    const made = await f.run(
      `mkdir -p downloads && ln -s /etc/shadow downloads/shadow && ln -s ${f.hostDir}/canary.txt downloads/canary.txt && readlink downloads/shadow downloads/canary.txt`,
    );
    expect(made.output).toBe(`/etc/shadow\n${f.hostDir}/canary.txt\n`);
    await scanRecordsNothing();
  });

  it('08. a relative link deep below downloads climbing out (a/b/c → ../../../../../..): nothing recorded', async () => {
    expect((await f.run('mkdir -p downloads/a/b && ln -s ../../../../../.. downloads/a/b/c && readlink downloads/a/b/c')).output).toBe(
      '../../../../../..\n',
    );
    await scanRecordsNothing();
  });

  it('09. a hard link to a host file: refused inside the sandbox (another mount), nothing recorded', async () => {
    const result = await f.run(
      'mkdir -p downloads; ln /etc/passwd downloads/passwd; ln /usr/bin/bash downloads/bash; ln /etc/shadow downloads/shadow; ls downloads | wc -l',
    );
    expect(result.output).toMatch(/Invalid cross-device link|Operation not permitted/);
    expect(result.output.trim().split('\n').at(-1)).toBe('0');
    await scanRecordsNothing();
  });

  it('10. a recorded file swapped for a link afterwards: the stored bytes stay the recorded ones, the link is not recorded', async () => {
    await f.run('mkdir -p downloads && echo original > downloads/r.txt');
    const first = await f.scan();
    expect(first.contents).toEqual(['original\n']);
    await f.run(`rm downloads/r.txt && ln -s ${f.hostDir}/canary.txt downloads/r.txt`);
    // What a download of the recorded artifact serves: its object, untouched by the swap.
    expect(await text(await f.objects.get(first.records[0].objectKey))).toBe('original\n');
    await scanRecordsNothing();
  });

  it('11. a FIFO in downloads: the scan neither opens nor waits on it', async () => {
    await f.run('mkdir -p downloads && mkfifo downloads/pipe && echo ok > downloads/ok.txt');
    const startedAt = Date.now();
    const { records, notes } = await f.scan();
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(records.map((r) => r.path)).toEqual(['downloads/ok.txt']);
    expect(notes).toEqual(['downloads/pipe is a FIFO (named pipe): not recorded']);
  });

  it('12. a socket in downloads: not recorded', async () => {
    await f.run('mkdir -p downloads && python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\'downloads/sock\')"');
    const { records, notes } = await f.scan();
    expect(records).toEqual([]);
    expect(notes).toEqual(['downloads/sock is a socket: not recorded']);
  });

  it('13. a device file: the sandbox cannot make one, and one placed there is never opened', async () => {
    const result = await f.run('mkdir -p downloads && mknod downloads/null c 1 3; echo "rc=$?"');
    expect(result.output).toMatch(/Operation not permitted/);
    // As if it got there anyway (e.g. a restore from an old snapshot): made by root on the host.
    execFileSync('mknod', [join(f.provider.workspacePath(f.task), 'downloads', 'tty'), 'c', '5', '0']);
    const { records, notes } = await f.scan();
    expect(records).toEqual([]);
    expect(notes).toEqual(['downloads/tty is a device file: not recorded']);
  });

  it('14. a FIFO anywhere in the workspace: the snapshot skips it, says so and does not wait', async () => {
    await f.run('echo kept > kept.txt && mkfifo pipe && mkdir -p deep/er && mkfifo deep/er/pipe2');
    const startedAt = Date.now();
    const { skipped } = await f.snapshotAndRestore();
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(skipped).toEqual(['deep/er/pipe2: a FIFO (named pipe)', 'pipe: a FIFO (named pipe)']);
    expect((await f.run('cat kept.txt; ls pipe 2>&1')).output).toMatch(/^kept\n.*No such file/);
  });

  it('15. links to host files in a snapshot: stored as links, restored as links, not a byte of the host inside', async () => {
    await f.run(`ln -s /etc etc && ln -s /etc/shadow shadow && ln -s ${f.hostDir}/canary.txt canary && ln -s ../../.. up`);
    const { archive } = await f.snapshotAndRestore();
    expectNothingLeaked([archive.toString('latin1')]);
    const check = await f.run('readlink etc shadow canary up');
    expect(check.output).toBe(`/etc\n/etc/shadow\n${f.hostDir}/canary.txt\n../../..\n`);
  });

  it('16. a crafted snapshot with a link and then a file "through" it: the restore writes nothing outside', async () => {
    const outside = join(f.base, 'target');
    await mkdir(outside);
    const entry = (path: string, type: 'SymbolicLink' | 'File' | 'Directory', body = '', linkpath?: string) => {
      const header = new Header({ path, type, linkpath, size: Buffer.byteLength(body), mode: 0o755, mtime: new Date() });
      header.encode();
      const data = Buffer.from(body);
      return Buffer.concat([header.block as Buffer, data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
    };
    const archive = Buffer.concat([
      entry('a', 'SymbolicLink', '', outside),
      entry('a/x', 'File', 'written-through'),
      entry('b', 'SymbolicLink', '', '../../../..'),
      Buffer.alloc(1024),
    ]);
    await f.provider.destroy(f.task);
    await f.provider.restore(f.task, Readable.from([archive]), { maxBytes: 1_000_000, timeoutMs: 5_000 }).catch(() => undefined);
    await expect(access(join(outside, 'x'))).rejects.toMatchObject({ code: 'ENOENT' });
    const workspace = f.provider.workspacePath(f.task);
    // Either the whole restore failed, or `a` came back as the folder the archive filled, never a link out.
    await expect(readlink(join(workspace, 'a'))).rejects.toBeTruthy();
  });

  it('17. a secret value in a file name: masked wherever the name is recorded', async () => {
    const secret = 'sk-live-9c8b7a6d5e4f';
    await f.run('mkdir -p downloads && touch "downloads/key-$KEY.txt"', { env: { KEY: secret } });
    const vault = new SecretVault();
    vault.put(f.task, { KEY: secret });
    const result = await new ArtifactScanner(f.objects).scan(
      f.task,
      f.provider.workspacePath(f.task),
      {},
      { redact: (t) => vault.redact(f.task, t) },
    );
    expect(JSON.stringify(result)).not.toContain(secret);
    expect(result.records.map((r) => r.path)).toEqual(['downloads/key-[REDACTED:KEY].txt']);
  });
});
