import { mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ConflictError, PayloadTooLargeError } from '@app/common';
import { describeObjectStoreContract } from '../testing/object-store.contract';
import { LocalObjectStore } from './local-object-store';

const tempDir = () => mkdtemp(join(tmpdir(), 'ats-objects-'));

describeObjectStoreContract('local files', async () => {
  const dir = await tempDir();
  return { store: new LocalObjectStore(join(dir, 'objects')), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

describe('local object store on disk', () => {
  let dir: string;
  let root: string;
  let store: LocalObjectStore;
  beforeEach(async () => {
    dir = await tempDir();
    root = join(dir, 'objects');
    store = new LocalObjectStore(root);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('keeps its folders private (0700)', async () => {
    await store.put('a/b/c', Buffer.from('x'));
    for (const folder of [root, join(root, 'keys'), join(root, 'tmp'), join(root, 'keys', 'a', 'b')]) {
      expect({ folder, mode: (await stat(folder)).mode & 0o777 }).toEqual({ folder, mode: 0o700 });
    }
  });

  it('leaves no temp file after a refused or failed put', async () => {
    await expect(store.put('a/x', Buffer.alloc(100), { maxBytes: 10 })).rejects.toBeInstanceOf(PayloadTooLargeError);
    const failing = new Readable({ read() {} });
    failing.push(Buffer.alloc(10));
    setImmediate(() => failing.destroy(new Error('gone')));
    await expect(store.put('a/y', failing)).rejects.toThrow('gone');
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
    expect(await readdir(join(root, 'keys'), { recursive: true })).toEqual([]);
  });

  it('clears temp files a crashed process left behind, but not recent ones', async () => {
    await store.put('warm', Buffer.from('x'));
    const fresh = new LocalObjectStore(root);
    await writeFile(join(root, 'tmp', 'stale'), 'partial');
    await writeFile(join(root, 'tmp', 'recent'), 'in flight');
    await utimes(join(root, 'tmp', 'stale'), new Date(0), new Date(0));
    await fresh.put('other', Buffer.from('y'));
    expect(await readdir(join(root, 'tmp'))).toEqual(['recent']);
  });

  it('refuses a key that is also a folder of other keys with a ConflictError', async () => {
    await store.put('p/q', Buffer.from('x'));
    await expect(store.put('p', Buffer.from('y'))).rejects.toBeInstanceOf(ConflictError);
    await expect(store.put('p/q/r', Buffer.from('z'))).rejects.toBeInstanceOf(ConflictError);
    expect(await store.list('')).toEqual(['p/q']);
  });
});
