import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PayloadTooLargeError, ValidationError } from '@app/common';
import { placeUploads } from './place-uploads';
import type { UploadLimits } from './upload-limits';
import { writeZip } from './testing/zip-fixtures';

const LIMITS: UploadLimits = {
  uploadMaxBytes: 1024 * 1024,
  uploadMaxFiles: 5,
  zipMaxEntries: 50,
  zipMaxUncompressedBytes: 20 * 1024 * 1024,
  zipMaxRatio: 100,
};
const OWNER = { uid: 200123, gid: 200123 };
const exists = (p: string) =>
  lstat(p).then(
    () => true,
    () => false,
  );
const asRoot = process.getuid?.() === 0 ? it : it.skip;

describe('placeUploads', () => {
  let dir: string;
  let staging: string;
  let workspace: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ats-uploads-'));
    [staging, workspace] = [join(dir, 'staging'), join(dir, 'ws')];
    await Promise.all([mkdir(staging), mkdir(workspace)]);
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  let n = 0;
  const staged = async (name: string, write: (path: string) => Promise<void>) => {
    const stagedPath = join(staging, `${n++}-file`);
    await write(stagedPath);
    return { name, stagedPath };
  };
  const zip = (name: string, entries: Parameters<typeof writeZip>[1], swaps?: Record<string, string>) =>
    staged(name, (p) => writeZip(p, entries, swaps));
  const plain = (name: string, text: string | Buffer) => staged(name, (p) => writeFile(p, text));
  /** Nothing of a refused batch may be left: not in the workspace, not staged, not beside the workspace. */
  const expectNothingLeft = async (workspaceNames: string[] = []) => {
    expect(await readdir(workspace)).toEqual(workspaceNames);
    expect(await readdir(staging)).toEqual([]);
    expect((await readdir(dir)).sort()).toEqual(['staging', 'ws']);
  };

  it('places plain files and extracts ZIPs (any case of .zip) with their folders, dropping the archives', async () => {
    const files = [
      await plain('notes.txt', 'hi'),
      await zip('project.zip', [
        { name: 'src/' },
        { name: 'src/main.py', content: 'print(1)' },
        { name: 'bin/run.sh', content: '#!/bin/sh', mode: 0o100755 },
      ]),
      await zip('MORE.ZIP', [{ name: 'docs/guide.md', content: '# guide' }]),
    ];
    await placeUploads(files, workspace, LIMITS);
    expect(await readFile(join(workspace, 'notes.txt'), 'utf8')).toBe('hi');
    expect(await readFile(join(workspace, 'src', 'main.py'), 'utf8')).toBe('print(1)');
    expect(await readFile(join(workspace, 'docs', 'guide.md'), 'utf8')).toBe('# guide');
    expect((await stat(join(workspace, 'bin', 'run.sh'))).mode & 0o777).toBe(0o755);
    expect((await stat(join(workspace, 'notes.txt'))).mode & 0o777).toBe(0o644);
    expect(await exists(join(workspace, 'project.zip'))).toBe(false);
    await expectNothingLeft(['bin', 'docs', 'notes.txt', 'src']);
  });

  asRoot('gives plain files and extracted files and folders to the owner', async () => {
    await placeUploads(
      [await plain('notes.txt', 'hi'), await zip('p.zip', [{ name: 'bin/run.sh', content: 'x' }])],
      workspace,
      LIMITS,
      OWNER,
    );
    for (const rel of ['notes.txt', 'bin', 'bin/run.sh'])
      expect({ rel, uid: (await stat(join(workspace, rel))).uid }).toEqual({ rel, uid: OWNER.uid });
  });

  it('keeps what the workspace already has, merging folders', async () => {
    await mkdir(join(workspace, 'src'));
    await writeFile(join(workspace, 'src', 'old.py'), 'old');
    await placeUploads([await zip('p.zip', [{ name: 'src/new.py', content: 'new' }])], workspace, LIMITS);
    expect((await readdir(join(workspace, 'src'))).sort()).toEqual(['new.py', 'old.py']);
  });

  it('removes what the first uploads placed when the third one fails', async () => {
    const files = [
      await plain('a.txt', 'one'),
      await zip('good.zip', [{ name: 'src/x.py', content: 'x' }]),
      await zip('bad.zip', [{ name: '@@/@@/evil.txt', content: 'x' }]),
    ];
    await expect(placeUploads(files, workspace, LIMITS)).rejects.toThrow('archive "bad.zip": entry "../../evil.txt" escapes the workspace');
    await expectNothingLeft();
  });

  it.each([
    ['zip slip', [{ name: '@@/@@/evil.txt', content: 'x' }], { '@@/': '../' }, /escapes the workspace/],
    ['absolute path', [{ name: 'Xetc/evil', content: 'x' }], { Xetc: '/etc' }, /absolute path/],
    ['symlink entry', [{ name: 'link', content: '/etc/passwd', mode: 0o120777 }], {}, /symbolic link/],
  ])('refuses a %s with a ValidationError and writes nothing', async (_label, entries, swaps, message) => {
    const error = await placeUploads([await plain('first.txt', 'x'), await zip('bad.zip', entries, swaps)], workspace, LIMITS).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(message);
    await expectNothingLeft();
  });

  it('refuses zip bombs with a PayloadTooLargeError: too many entries, too much in total, too high a ratio', async () => {
    const cases = [
      await zip(
        'many.zip',
        Array.from({ length: 51 }, (_, i) => ({ name: `f${i}.txt`, content: 'x' })),
      ),
      await zip('huge.zip', [
        { name: 'a.bin', content: Buffer.alloc(12 * 1024 * 1024, 1) },
        { name: 'b.bin', content: Buffer.alloc(12 * 1024 * 1024, 2) },
      ]),
      await zip('ratio.zip', [{ name: 'zeros.bin', content: Buffer.alloc(8 * 1024 * 1024) }]),
    ];
    for (const file of cases) {
      const error = await placeUploads([file], workspace, LIMITS).catch((e: unknown) => e);
      expect({ file: file.name, tooLarge: error instanceof PayloadTooLargeError }).toEqual({ file: file.name, tooLarge: true });
    }
    await expectNothingLeft();
  });

  it('refuses more files or more bytes than the upload limits', async () => {
    const many = await Promise.all(Array.from({ length: 6 }, (_, i) => plain(`f${i}.txt`, 'x')));
    await expect(placeUploads(many, workspace, LIMITS)).rejects.toThrow(/at most 5 files .*UPLOAD_MAX_FILES/);
    const big = [await plain('a.bin', Buffer.alloc(600 * 1024)), await plain('b.bin', Buffer.alloc(600 * 1024))];
    await expect(placeUploads(big, workspace, LIMITS)).rejects.toThrow(/exceed 1048576 bytes .*UPLOAD_MAX_BYTES/);
    await expectNothingLeft();
  });

  it('refuses a name clash between uploads, or with a file already in the workspace', async () => {
    await expect(
      placeUploads([await plain('a.txt', 'one'), await zip('dup.zip', [{ name: 'a.txt', content: 'two' }])], workspace, LIMITS),
    ).rejects.toThrow(/entry "a.txt" clashes/);
    await expect(
      placeUploads([await zip('dup.zip', [{ name: 'a.txt', content: 'two' }]), await plain('a.txt', 'one')], workspace, LIMITS),
    ).rejects.toThrow(/"a.txt" is uploaded twice/);
    await writeFile(join(workspace, 'mine.txt'), 'mine');
    await expect(placeUploads([await plain('new.txt', 'n'), await plain('mine.txt', 'theirs')], workspace, LIMITS)).rejects.toThrow(
      /"mine.txt" already exists in the workspace/,
    );
    expect(await readFile(join(workspace, 'mine.txt'), 'utf8')).toBe('mine');
    await expectNothingLeft(['mine.txt']);
  });

  it.each(['../x.txt', 'a/b.txt', '..', '', 'nul\0.txt'])('refuses the file name %j', async (name) => {
    await expect(placeUploads([await plain(name, 'x')], workspace, LIMITS)).rejects.toBeInstanceOf(ValidationError);
    await expectNothingLeft();
  });

  it('refuses a file that is not a ZIP at all', async () => {
    await expect(placeUploads([await plain('fake.zip', 'not a zip')], workspace, LIMITS)).rejects.toThrow(/not a valid ZIP/);
    await expectNothingLeft();
  });
});
