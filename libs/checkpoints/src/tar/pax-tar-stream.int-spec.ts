import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { TarEntry } from './pax-tar-stream';
import { paxTar } from './pax-tar-stream';

/* GNU tar reads every archive here, with the flags restoreWorkspace extracts with. */

const T0 = 1_700_000_000_000;

function file(path: string, content: string | Buffer, mode = 0o644, mtimeMs = T0 + 1500): TarEntry {
  const bytes = Buffer.from(content);
  return { path, kind: 'file', mode, mtimeMs, size: bytes.length, body: async () => Readable.from([bytes]) };
}
const dir = (path: string, mode = 0o755, mtimeMs = T0 + 7_250): TarEntry => ({ path, kind: 'dir', mode, mtimeMs, size: 0 });
const link = (path: string, target: string): TarEntry => ({ path, kind: 'symlink', mode: 0o777, mtimeMs: T0, size: 0, target });

async function* listed(entries: readonly TarEntry[]): AsyncGenerator<TarEntry> {
  yield* entries;
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs GNU tar with `input` on its stdin (in UTC, so listed times are comparable). */
async function gnuTar(args: readonly string[], input: Readable): Promise<Run> {
  const child = spawn('tar', args, { env: { ...process.env, TZ: 'UTC', LC_ALL: 'C.UTF-8' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  await pipeline(input, child.stdin);
  return { code: await exited, stdout, stderr };
}

const extract = (into: string, input: Readable) =>
  gnuTar(['--extract', '--file=-', '--no-same-owner', '--delay-directory-restore', '--read-full-records', '-C', into], input);

interface Found {
  readonly kind: TarEntry['kind'];
  readonly mode: number;
  readonly mtimeSec?: number;
  readonly content?: string;
  readonly target?: string;
}

/** Everything under `root`, by relative path, read without following a link. */
async function walk(root: string): Promise<Record<string, Found>> {
  const found: Record<string, Found> = {};
  for (const name of await readdir(root, { recursive: true })) {
    const path = join(root, name);
    const info = await lstat(path);
    const mode = info.mode & 0o7777;
    const mtimeSec = Math.floor(info.mtimeMs / 1000);
    if (info.isSymbolicLink()) found[name] = { kind: 'symlink', mode: 0o777, target: await readlink(path) };
    else if (info.isDirectory()) found[name] = { kind: 'dir', mode, mtimeSec };
    else found[name] = { kind: 'file', mode, mtimeSec, content: (await readFile(path)).toString('utf8') };
  }
  return found;
}

async function expected(entries: readonly TarEntry[]): Promise<Record<string, Found>> {
  const want: Record<string, Found> = {};
  for (const e of entries) {
    const mtimeSec = Math.floor(e.mtimeMs / 1000);
    if (e.kind === 'symlink') want[e.path] = { kind: 'symlink', mode: 0o777, target: e.target };
    else if (e.kind === 'dir') want[e.path] = { kind: 'dir', mode: e.mode, mtimeSec };
    else want[e.path] = { kind: 'file', mode: e.mode, mtimeSec, content: await text(await e.body!()) };
  }
  return want;
}

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** How `tar -tv --full-time` prints an entry we wrote (owner 0/0, since the names are empty). */
function listingLine(e: TarEntry): string {
  const kind = { file: '-', dir: 'd', symlink: 'l' }[e.kind];
  const perms = [6, 3, 0].map((shift) => ((e.mode >> shift) & 7).toString(2).padStart(3, '0').replace(/1/g, 'x')).join('');
  const rwx = [...perms].map((bit, i) => (bit === '0' ? '-' : 'rwx'[i % 3])).join('');
  const when = new Date(Math.floor(e.mtimeMs / 1000) * 1000).toISOString().replace('T', ' ').slice(0, 19);
  const name = e.kind === 'dir' ? `${e.path}/` : e.kind === 'symlink' ? `${e.path} -> ${e.target}` : e.path;
  return `${kind}${rwx} 0/0 ${e.kind === 'file' ? e.size : 0} ${when} ${name}`;
}

/** `size` bytes of a repeating random block, made as they are read, and their sha256. */
function generated(size: number): { body: () => Promise<Readable>; sha256: string } {
  const block = randomBytes(1024 * 1024);
  const hash = createHash('sha256');
  for (let n = 0; n < size; n += block.length) hash.update(block.subarray(0, Math.min(block.length, size - n)));
  const body = async () => {
    let sent = 0;
    return new Readable({
      read() {
        if (sent >= size) return void this.push(null);
        const n = Math.min(block.length, size - sent);
        sent += n;
        this.push(block.subarray(0, n));
      },
    });
  };
  return { body, sha256: hash.digest('hex') };
}

describe('paxTar, read back by GNU tar', () => {
  let root: string;
  let into: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'ats-paxtar-'));
    into = join(root, 'out');
    await mkdir(into);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const long300 = `${'d'.repeat(140)}/${'f'.repeat(159)}`;
  const workspace: readonly TarEntry[] = [
    file('hello.txt', 'hello\n'),
    file('empty', ''),
    file('-rf', 'not an option', 0o600),
    file('run.sh', '#!/bin/sh\necho hi\n', 0o755, T0 + 3_999),
    file('n'.repeat(100), '100'),
    file('n'.repeat(101), '101'),
    file('m'.repeat(255), '255'),
    dir('d'.repeat(140)),
    file(long300, '300'),
    dir('café'),
    file('café/日本.txt', 'utf-8 names'),
    dir('a'),
    dir('a/b', 0o700),
    dir('a/b/c'),
    file('a/b/c/deep.txt', 'deep', 0o600),
    dir('empty-dir', 0o750, T0 - 86_400_000),
    link('to-hello', 'hello.txt'),
    link('a/dangling', '../nowhere/at/all'),
    link('far', `${'t/'.repeat(74)}xy`),
  ];

  it('extracts files, folders and links exactly as given', async () => {
    expect(link('x', `${'t/'.repeat(74)}xy`).target).toHaveLength(150);
    expect(Buffer.byteLength(long300)).toBe(300);
    const run = await extract(into, paxTar(listed(workspace)));
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(await walk(into)).toEqual(await expected(workspace));
  });

  it('is listed by tar -tv --full-time as written', async () => {
    const run = await gnuTar(['--list', '--verbose', '--full-time', '--file=-'], paxTar(listed(workspace)));
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.replace(/ +/g, ' '));
    expect(lines).toEqual(workspace.map(listingLine));
  });

  it('streams a 64 MiB file through without holding it', async () => {
    const size = 64 * 1024 * 1024;
    const { body, sha256 } = generated(size);
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    try {
      const run = await extract(into, paxTar(listed([{ path: 'big.bin', kind: 'file', mode: 0o644, mtimeMs: T0, size, body }])));
      expect(run).toMatchObject({ code: 0, stderr: '' });
    } finally {
      clearInterval(sampler);
    }
    expect((peak - before) / 1024 / 1024).toBeLessThan(40);
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(join(into, 'big.bin'))) hash.update(chunk as Buffer);
    expect(hash.digest('hex')).toBe(sha256);
  }, 60_000);

  it('fails, naming the path, when a body is a byte short or a byte too long', async () => {
    const short: TarEntry = { ...file('short.txt', 'abcd'), size: 5 };
    await expect(text(paxTar(listed([file('ok', 'fine'), short])))).rejects.toThrow(/"short\.txt".*4 bytes, not its size, 5/);
    const long: TarEntry = { ...file('long.txt', 'abcdef'), size: 5 };
    await expect(text(paxTar(listed([long])))).rejects.toThrow(/"long\.txt".*more than its size, 5 bytes/);
  });

  it('fails, naming the path, when a body errors, and the archive read by tar is refused', async () => {
    const failing: TarEntry = {
      ...file('broken.bin', ''),
      size: 100_000,
      body: async () =>
        new Readable({
          read() {
            this.push(Buffer.alloc(1000));
            this.destroy(new Error('disk went away'));
          },
        }),
    };
    await expect(text(paxTar(listed([failing])))).rejects.toThrow('tar entry "broken.bin": disk went away');
    await expect(extract(into, paxTar(listed([failing])))).rejects.toThrow('disk went away');
  });

  it('refuses an entry with a "..", ".", empty or absolute path segment', async () => {
    for (const path of ['../escape', 'a/../../b', 'a/./b', '/abs', 'a//b', 'a/', '..', '']) {
      await expect(text(paxTar(listed([file(path, 'x')])))).rejects.toThrow(/empty, '\.' or '\.\.' segment/);
    }
  });

  it('stops, closing the body being read, when its signal fires', async () => {
    const { body } = generated(32 * 1024 * 1024);
    let opened: Readable | undefined;
    const entry: TarEntry = {
      path: 'big',
      kind: 'file',
      mode: 0o644,
      mtimeMs: T0,
      size: 32 * 1024 * 1024,
      body: async () => (opened = await body()),
    };
    const abort = new AbortController();
    const tar = paxTar(listed([entry]), { signal: abort.signal });
    const reading = text(tar);
    tar.once('data', () => abort.abort());
    await expect(reading).rejects.toThrow(/abort/i);
    await new Promise((resolve) => setImmediate(resolve));
    expect(opened?.destroyed).toBe(true);
  });
});
