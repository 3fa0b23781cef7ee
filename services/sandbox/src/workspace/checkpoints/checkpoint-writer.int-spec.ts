import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { CheckpointReader, checkpointArchive, rootEntryOf } from '@app/checkpoints';
import { LocalObjectStore } from '@app/object-store/local/local-object-store';
import type { CheckpointRef } from '@app/task-domain';
import { baselineOf } from './baseline';
import type { Baseline } from './baseline';
import { CheckpointTooLargeError, writeCheckpoint } from './checkpoint-writer';

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe('writeCheckpoint (a real workspace folder, the local object store)', () => {
  let dir: string;
  let ws: string;
  let objects: LocalObjectStore;
  let reader: CheckpointReader;
  let baseline: Baseline | undefined;
  let seq: number;

  const step = async (maxAddedBytes = 1024 ** 3, onSkipped?: (path: string, why: string) => void) => {
    const written = await writeCheckpoint(objects, ws, baseline, {
      taskId: 'task_a',
      lineage: 'task_a',
      seq: ++seq,
      maxAddedBytes,
      onSkipped,
    });
    baseline = written.baseline;
    return written;
  };
  const list = async (ref: CheckpointRef) => (await reader.files(rootEntryOf(ref), 1000)).files;
  const content = async (ref: CheckpointRef, path: string) => {
    const entry = await reader.find(rootEntryOf(ref), path);
    return entry ? text(await reader.open(entry)) : undefined;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ckpt-'));
    ws = join(dir, 'ws');
    mkdirSync(ws);
    objects = new LocalObjectStore(join(dir, 'objects'));
    reader = new CheckpointReader(objects);
    baseline = undefined;
    seq = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reports what each step created, modified and deleted, and keeps every step readable as it was', async () => {
    writeFileSync(join(ws, 'a.txt'), 'one');
    mkdirSync(join(ws, 'dir'));
    writeFileSync(join(ws, 'dir', 'b.txt'), 'bee');
    const first = await step();
    expect(first.changes).toEqual([
      { path: 'a.txt', change: 'created', size: 3 },
      { path: 'dir/b.txt', change: 'created', size: 3 },
    ]);

    writeFileSync(join(ws, 'a.txt'), 'two!');
    unlinkSync(join(ws, 'dir', 'b.txt'));
    writeFileSync(join(ws, 'dir', 'c.txt'), 'sea');
    const second = await step();
    expect(second.changes).toEqual([
      { path: 'a.txt', change: 'modified', size: 4 },
      { path: 'dir/b.txt', change: 'deleted', size: 3 },
      { path: 'dir/c.txt', change: 'created', size: 3 },
    ]);

    expect(await list(first.ref)).toEqual([
      { path: 'a.txt', size: 3, sha256: sha('one') },
      { path: 'dir/b.txt', size: 3, sha256: sha('bee') },
    ]);
    expect(await content(first.ref, 'a.txt')).toBe('one');
    expect(await content(second.ref, 'a.txt')).toBe('two!');
    expect(await content(second.ref, 'dir/b.txt')).toBeUndefined();
    expect(await content(second.ref, 'dir/c.txt')).toBe('sea');
  });

  it('stores nothing for a step that changed nothing, and the same content once', async () => {
    writeFileSync(join(ws, 'a.txt'), 'same');
    const first = await step();
    const again = await step();
    expect(again.ref.root.sha256).toBe(first.ref.root.sha256);
    expect(again.ref.addedBytes).toBe(0);
    expect(again.changes).toEqual([]);
    writeFileSync(join(ws, 'copy.txt'), 'same');
    const copy = await step();
    // The new name costs a folder node, not the content again.
    expect(copy.ref.addedBytes).toBeLessThan(400);
    expect(await content(copy.ref, 'copy.txt')).toBe('same');
  });

  it('keeps a step small in a big workspace: one changed 1 KiB file of 1,000 costs a few KiB', async () => {
    for (let d = 0; d < 10; d++) {
      mkdirSync(join(ws, `d${d}`));
      for (let f = 0; f < 100; f++) writeFileSync(join(ws, `d${d}`, `f${f}.txt`), `${d}-${f}`.padEnd(1024, '.'));
    }
    const first = await step();
    expect(first.ref.files).toBe(1000);
    let added = 0;
    for (let i = 0; i < 10; i++) {
      writeFileSync(join(ws, 'd3', 'f7.txt'), `${i}`.padEnd(1024, '!'));
      const next = await step();
      expect(next.changes).toEqual([{ path: 'd3/f7.txt', change: 'modified', size: 1024 }]);
      added += next.ref.addedBytes;
    }
    // 1 KiB of content, a leaf of at most 64 names, the buckets above it, the top: well under 10 KiB a step.
    expect(added / 10).toBeLessThan(10 * 1024);
  });

  it('never follows a link, and leaves FIFOs out (saying so) without blocking on them', async () => {
    const outside = join(dir, 'secret.txt');
    writeFileSync(outside, 'host secret');
    symlinkSync(outside, join(ws, 'link'));
    symlinkSync('/', join(ws, 'root'));
    execFileSync('mkfifo', [join(ws, 'pipe')]);
    const skipped: string[] = [];
    const written = await step(undefined, (path, why) => skipped.push(`${path}: ${why}`));
    expect(skipped).toEqual(['pipe: a FIFO (named pipe)']);
    expect(written.changes.map((c) => c.path)).toEqual(['link', 'root']);
    expect(await reader.find(rootEntryOf(written.ref), 'link')).toMatchObject({ kind: 'symlink', target: outside });
    expect(await reader.find(rootEntryOf(written.ref), 'root/etc/passwd')).toBeUndefined();
    const stored = readdirSync(join(dir, 'objects'), { recursive: true }).map(String);
    for (const name of stored) {
      const path = join(dir, 'objects', name);
      if (statSync(path).isFile()) expect(readFileSync(path).includes('host secret')).toBe(false);
    }
  });

  it('is read back from the store after a restart: nothing changed gives the same tree, a change is reported', async () => {
    writeFileSync(join(ws, 'a.txt'), 'one');
    for (let i = 0; i < 100; i++) writeFileSync(join(ws, `many-${i}`), `${i}`);
    const first = await step();
    baseline = await baselineOf(new CheckpointReader(objects), first.ref);
    const same = await step();
    expect(same.ref.root.sha256).toBe(first.ref.root.sha256);
    expect(same.ref.addedBytes).toBe(0);
    // The top folder (101 names) is a trie: after a restart its untouched buckets are known from
    // the store, so one changed name stores one leaf and the nodes above it, not every bucket.
    writeFileSync(join(ws, 'many-7'), 'seven');
    baseline = await baselineOf(new CheckpointReader(objects), same.ref);
    const one = await step();
    expect(one.changes).toEqual([{ path: 'many-7', change: 'modified', size: 5 }]);
    // Measured: 1,088 bytes; 7,168 when the buckets were stored again.
    expect(one.ref.addedBytes).toBeLessThan(3000);
    expect(same.changes).toEqual([]);
    writeFileSync(join(ws, 'a.txt'), 'changed');
    baseline = await baselineOf(new CheckpointReader(objects), one.ref);
    expect((await step()).changes).toEqual([{ path: 'a.txt', change: 'modified', size: 7 }]);
  });

  it('restores as a tar archive holding every file, folder and link as they were', async () => {
    mkdirSync(join(ws, 'sub', 'deep'), { recursive: true });
    writeFileSync(join(ws, 'sub', 'deep', 'x.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    writeFileSync(join(ws, '-starts-with-dash'), 'dash');
    writeFileSync(join(ws, `${'n'.repeat(150)}.txt`), 'long');
    mkdirSync(join(ws, 'empty'));
    symlinkSync('sub/deep/x.sh', join(ws, 'run'));
    const written = await step();
    const out = join(dir, 'out');
    mkdirSync(out);
    const archive = checkpointArchive(reader, written.ref);
    const chunks: Buffer[] = [];
    for await (const chunk of archive) chunks.push(chunk as Buffer);
    execFileSync('tar', ['-x', '--file=-', '-C', out], { input: Buffer.concat(chunks) });
    expect(readFileSync(join(out, 'sub', 'deep', 'x.sh'), 'utf8')).toBe('#!/bin/sh\necho hi\n');
    expect(statSync(join(out, 'sub', 'deep', 'x.sh')).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(out, '-starts-with-dash'), 'utf8')).toBe('dash');
    expect(readFileSync(join(out, `${'n'.repeat(150)}.txt`), 'utf8')).toBe('long');
    expect(readdirSync(join(out, 'empty'))).toEqual([]);
    expect(readlinkSync(join(out, 'run'))).toBe('sub/deep/x.sh');
  });

  it('refuses a step over the bound and leaves nothing stored', async () => {
    writeFileSync(join(ws, 'big.bin'), Buffer.alloc(64 * 1024, 1));
    await expect(step(16 * 1024)).rejects.toBeInstanceOf(CheckpointTooLargeError);
    expect(await objects.list('checkpoints/')).toEqual([]);
  });

  it('refuses a big sparse file at once, without reading its holes, and stores nothing', async () => {
    execFileSync('truncate', ['-s', '1000M', join(ws, 'holes.bin')]);
    writeFileSync(join(ws, 'small.txt'), 'x');
    const startedAt = Date.now();
    await expect(step()).rejects.toThrow(/holes\.bin is a sparse file \(1048576000 bytes, \d+ allocated\)/);
    // Reading and hashing 1,000 MB of zeros takes seconds here.
    expect(Date.now() - startedAt).toBeLessThan(1000);
    expect(await objects.list('checkpoints/')).toEqual([]);
  });

  it('stores a file over 8 MiB as an object of its own, named by its hash and when it was written', async () => {
    const big = Buffer.alloc(9 * 1024 ** 2, 7);
    writeFileSync(join(ws, 'big.bin'), big);
    const written = await step();
    const entry = await reader.find(rootEntryOf(written.ref), 'big.bin');
    expect(entry?.at?.key).toMatch(new RegExp(`^checkpoints/task_a/blobs/${sha(big)}-[0-9]{13}$`));
    expect(written.ref.addedBytes).toBeGreaterThanOrEqual(big.length);
  });
});
