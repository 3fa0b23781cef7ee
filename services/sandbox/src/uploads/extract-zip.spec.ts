import { randomBytes } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PayloadTooLargeError, ValidationError } from '@app/common';
import type { TempWorkspace } from '@app/common/testing/temp-workspace';
import { createTempWorkspace } from '@app/common/testing/temp-workspace';
import { extractZip } from './extract-zip';
import type { UploadLimits } from './upload-limits';
import { uploadLimitsFromEnv } from './upload-limits';
import type { ZipEntrySpec } from './testing/zip-fixtures';
import { writeZip } from './testing/zip-fixtures';

const LIMITS: UploadLimits = { ...uploadLimitsFromEnv({}), zipMaxEntries: 50, zipMaxUncompressedBytes: 4 * 1024 * 1024, zipMaxRatio: 100 };
const LOCAL_HEADER = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const CENTRAL_HEADER = Buffer.from([0x50, 0x4b, 0x01, 0x02]);

/** Rewrites every local and central header, to make archives yazl refuses to write: encrypted ones, lying ones. */
async function patchHeaders(path: string, patch: { encrypted?: boolean; uncompressedSize?: number }): Promise<void> {
  const bytes = await readFile(path);
  for (const [signature, flagsAt, sizeAt] of [
    [LOCAL_HEADER, 6, 22],
    [CENTRAL_HEADER, 8, 24],
  ] as const) {
    for (let i = bytes.indexOf(signature); i !== -1; i = bytes.indexOf(signature, i + 4)) {
      if (patch.encrypted) bytes.writeUInt16LE(bytes.readUInt16LE(i + flagsAt) | 0x1, i + flagsAt);
      if (patch.uncompressedSize !== undefined) bytes.writeUInt32LE(patch.uncompressedSize, i + sizeAt);
    }
  }
  await writeFile(path, bytes);
}

describe('extractZip', () => {
  let ws: TempWorkspace;
  beforeEach(async () => (ws = await createTempWorkspace()));
  afterEach(() => ws.cleanup());

  const zip = async (entries: readonly ZipEntrySpec[], swaps?: Record<string, string>) => {
    const path = join(ws.outside, `${randomBytes(4).toString('hex')}.zip`);
    await writeZip(path, entries, swaps);
    return path;
  };
  const extract = (path: string, limits = LIMITS) => extractZip(path, ws.root, limits, undefined, 'bad.zip');
  const modeOf = async (rel: string) => (await stat(join(ws.root, rel))).mode & 0o777;
  /** No staging folder may be left beside the workspace. */
  const besideWorkspace = () => readdir(dirname(ws.root));

  it('keeps nested folders, with 0644 files, 0755 executables and 0755 folders', async () => {
    const path = await zip([
      { name: 'docs/' },
      { name: 'src/app/main.py', content: 'print(1)' },
      { name: 'bin/run.sh', content: '#!/bin/sh', mode: 0o100755 },
    ]);
    await extractZip(path, ws.root, LIMITS);
    expect(await readFile(join(ws.root, 'src/app/main.py'), 'utf8')).toBe('print(1)');
    expect(await Promise.all(['src/app/main.py', 'bin/run.sh', 'src', 'src/app', 'docs'].map(modeOf))).toEqual([
      0o644, 0o755, 0o755, 0o755, 0o755,
    ]);
    expect(await besideWorkspace()).toEqual(['outside', 'workspace']);
  });

  it('merges into folders that exist and leaves other files alone', async () => {
    await ws.file('src/old.py', 'old');
    await extractZip(await zip([{ name: 'src/new.py', content: 'new' }]), ws.root, LIMITS);
    expect((await ws.names('src')).sort()).toEqual(['new.py', 'old.py']);
  });

  (process.getuid?.() === 0 ? it : it.skip)('gives every file and folder it creates to the owner', async () => {
    await extractZip(
      await zip([
        { name: 'a/b/c.txt', content: 'x' },
        { name: 'top.txt', content: 'y' },
      ]),
      ws.root,
      LIMITS,
      { uid: 4242, gid: 4343 },
    );
    for (const rel of ['a', 'a/b', 'a/b/c.txt', 'top.txt']) {
      const { uid, gid } = await stat(join(ws.root, rel));
      expect({ rel, uid, gid }).toEqual({ rel, uid: 4242, gid: 4343 });
    }
  });

  it.each<[string, ZipEntrySpec, Record<string, string>, string]>([
    ['a zip slip', { name: '@@/@@/evil', content: 'x' }, { '@@/': '../' }, 'entry "../../evil" escapes the workspace'],
    ['a backslash escape', { name: 'QQQevil', content: 'x' }, { QQQ: '..\\' }, 'entry "../evil" escapes the workspace'],
    ['an absolute path', { name: 'Xetc/x', content: 'x' }, { Xetc: '/etc' }, 'entry "/etc/x" has an absolute path'],
    ['a drive letter', { name: 'CC/x', content: 'x' }, { 'CC/': 'C:/' }, 'entry "C:/x" has an absolute path'],
    ['a NUL in a name', { name: 'aZb', content: 'x' }, { aZb: 'a\0b' }, 'entry "a\0b" has a path that is not portable'],
    ['a symlink entry', { name: 'link', content: '/etc/passwd', mode: 0o120777 }, {}, 'entry "link" is a symbolic link'],
  ])('refuses %s with a ValidationError naming the entry, and writes nothing', async (_case, bad, swaps, message) => {
    await ws.file('kept.txt', 'kept');
    const path = await zip([{ name: 'fine.txt', content: 'ok' }, bad], swaps);
    const error = await extract(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toContain(`archive "bad.zip": ${message}`);
    expect(await ws.names()).toEqual(['kept.txt']);
    expect(await besideWorkspace()).toEqual(['outside', 'workspace']);
  });

  it.each<[string, string, string]>([
    ['2,000 folders deep', `${'a/'.repeat(2_000)}x.txt`, 'is nested more than 64 folders deep'],
    ['a name of 300 bytes', `docs/${'n'.repeat(300)}.txt`, 'has a name longer than 255 bytes'],
    ['a name of 200 two-byte characters', `${'é'.repeat(200)}.txt`, 'has a name longer than 255 bytes'],
    ['a path of 4,200 bytes', `${`${'d'.repeat(69)}/`.repeat(60)}${'x'.repeat(200)}`, 'has a path longer than 3072 bytes'],
  ])('refuses an entry with %s (the filesystem would refuse it mid-extraction), naming it cut short', async (_case, name, why) => {
    const error = await extract(
      await zip([
        { name: 'fine.txt', content: 'ok' },
        { name, content: 'x' },
      ]),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toContain(`archive "bad.zip": entry "${name.slice(0, 200)}`);
    expect((error as Error).message).toContain(why);
    expect((error as Error).message.length).toBeLessThan(400);
    expect(await ws.names()).toEqual([]);
    expect(await besideWorkspace()).toEqual(['outside', 'workspace']);
  });

  it('extracts an entry just inside the path limits', async () => {
    const name = `${`${'d'.repeat(30)}/`.repeat(63)}${'f'.repeat(100)}`;
    await extract(await zip([{ name, content: 'deep' }]));
    expect(await readFile(join(ws.root, name), 'utf8')).toBe('deep');
  });

  it('refuses an encrypted entry', async () => {
    const path = await zip([{ name: 'secret.txt', content: 'x' }]);
    await patchHeaders(path, { encrypted: true });
    await expect(extract(path)).rejects.toThrow('archive "bad.zip": entry "secret.txt" is encrypted');
  });

  it.each<[string, ZipEntrySpec[], string]>([
    ['too many entries', Array.from({ length: 51 }, (_, i) => ({ name: `f${i}.txt`, content: 'x' })), 'ZIP_MAX_ENTRIES'],
    [
      'too much declared in total',
      [1, 2, 3].map((i) => ({ name: `${i}.bin`, content: randomBytes(1536 * 1024) })),
      'ZIP_MAX_UNCOMPRESSED_BYTES',
    ],
    ['a compression ratio bomb', [{ name: 'zeros.bin', content: Buffer.alloc(2 * 1024 * 1024) }], 'ZIP_MAX_RATIO'],
  ])('refuses %s with a PayloadTooLargeError naming the limit', async (_case, entries, limit) => {
    const error = await extract(await zip(entries)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect((error as Error).message).toContain(limit);
    expect(await ws.names()).toEqual([]);
  });

  it('refuses 50 MB of zeros under the default limits, before inflating any of it', async () => {
    const path = await zip([{ name: 'zeros.bin', content: Buffer.alloc(50 * 1024 * 1024) }]);
    await expect(extractZip(path, ws.root, uploadLimitsFromEnv({}))).rejects.toThrow(/compressed more than 200:1 \(ZIP_MAX_RATIO\)/);
    expect(await ws.names()).toEqual([]);
  });

  it('extracts a small, very compressible file: the ratio only matters above 1 MiB', async () => {
    await extract(await zip([{ name: 'zeros.bin', content: Buffer.alloc(512 * 1024) }]));
    expect((await stat(join(ws.root, 'zeros.bin'))).size).toBe(512 * 1024);
  });

  it('refuses an entry that inflates to more than it declares, after good ones, leaving nothing', async () => {
    const path = await zip([
      { name: 'good.txt', content: 'ok' },
      { name: 'sub/ok.txt', content: 'ok' },
      { name: 'liar.txt', content: 'lie '.repeat(64 * 1024) },
    ]);
    await patchHeaders(path, { uncompressedSize: 2 });
    await expect(extract(path)).rejects.toThrow(/entry "liar.txt" is damaged/);
    expect(await ws.names()).toEqual([]);
    expect(await besideWorkspace()).toEqual(['outside', 'workspace']);
  });

  it('refuses an entry that would replace a file already there, before moving anything', async () => {
    await ws.file('README.md', 'mine');
    const error = await extract(
      await zip([
        { name: 'src/a.py', content: 'a' },
        { name: 'README.md', content: 'theirs' },
      ]),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toContain('archive "bad.zip": entry "README.md" clashes');
    expect(await ws.names()).toEqual(['README.md']);
    expect(await readFile(join(ws.root, 'README.md'), 'utf8')).toBe('mine');
  });

  it('refuses an archive with the same entry twice, or a name as both file and folder', async () => {
    await expect(
      extract(
        await zip([
          { name: 'a.txt', content: '1' },
          { name: 'a.txt', content: '2' },
        ]),
      ),
    ).rejects.toThrow(/entry "a.txt" appears twice/);
    await expect(
      extract(
        await zip([
          { name: 'a', content: '1' },
          { name: 'a/b', content: '2' },
        ]),
      ),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(await ws.names()).toEqual([]);
  });

  it('refuses a file that is not a ZIP', async () => {
    const path = join(ws.outside, 'fake.zip');
    await writeFile(path, 'not a zip at all');
    await expect(extract(path)).rejects.toThrow(/archive "bad.zip" is not a valid ZIP file/);
  });
});
