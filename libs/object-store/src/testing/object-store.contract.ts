import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { NotFoundError, PayloadTooLargeError, ValidationError } from '@app/common';
import type { ObjectStore } from '../object-store.port';

export interface ObjectStoreFixture {
  readonly store: ObjectStore;
  cleanup(): Promise<void>;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** `size` bytes of a repeating random block, generated lazily: never held in memory at once. */
function generated(size: number, block = randomBytes(1024 * 1024)): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      const n = Math.min(block.length, size - sent);
      sent += n;
      this.push(block.subarray(0, n));
    },
  });
}

/** Every object store adapter's spec calls this with its own factory. */
export function describeObjectStoreContract(name: string, factory: () => Promise<ObjectStoreFixture>): void {
  describe(`ObjectStore contract: ${name}`, () => {
    let fixture: ObjectStoreFixture;
    let store: ObjectStore;
    beforeEach(async () => {
      fixture = await factory();
      store = fixture.store;
    });
    afterEach(async () => fixture.cleanup());

    it('round-trips a buffer with its size, hash and content type', async () => {
      const body = Buffer.from('hello objects');
      const put = await store.put('a/b/c.txt', body, { contentType: 'text/plain' });
      expect(put).toEqual({ size: body.length, sha256: sha256(body) });
      expect(await readAll(await store.get('a/b/c.txt'))).toEqual(body);
      expect(await store.stat('a/b/c.txt')).toMatchObject({ size: body.length, sha256: put.sha256, contentType: 'text/plain' });
    });

    it('round-trips a chunked stream and an empty object', async () => {
      const parts = ['chunk one, ', 'chunk two, ', 'chunk three'];
      const put = await store.put('stream/parts.txt', Readable.from(parts.map((p) => Buffer.from(p))));
      expect(put.size).toBe(parts.join('').length);
      expect((await readAll(await store.get('stream/parts.txt'))).toString()).toBe(parts.join(''));
      expect(await store.put('stream/empty', Buffer.alloc(0))).toEqual({ size: 0, sha256: sha256(Buffer.alloc(0)) });
      expect(await readAll(await store.get('stream/empty'))).toEqual(Buffer.alloc(0));
      expect(await store.stat('stream/empty')).toMatchObject({ size: 0 });
    });

    // Whether it streams without buffering (RSS growth) is benchmark 7 (bench/moved-bounds.ts):
    // the jest process's RSS moves with everything else it runs, so a bound on it here flakes.
    it('streams 200 MB in and out intact', async () => {
      const size = 200 * 1024 * 1024;
      const block = randomBytes(1024 * 1024);
      const expected = createHash('sha256');
      for (let sent = 0; sent < size; sent += block.length) expected.update(block);
      const put = await store.put('big/object.bin', generated(size, block));
      expect(put).toEqual({ size, sha256: expected.digest('hex') });
      const hash = createHash('sha256');
      let read = 0;
      for await (const chunk of await store.get('big/object.bin')) {
        hash.update(chunk as Buffer);
        read += (chunk as Buffer).length;
      }
      expect(read).toBe(size);
      expect(hash.digest('hex')).toBe(put.sha256);
    }, 60_000);

    it('refuses a body over maxBytes and leaves nothing behind, not even over an old value', async () => {
      await store.put('limited/x', Buffer.from('old'));
      await expect(store.put('limited/x', generated(5000), { maxBytes: 4096 })).rejects.toBeInstanceOf(PayloadTooLargeError);
      expect((await readAll(await store.get('limited/x'))).toString()).toBe('old');
      await expect(store.put('limited/y', generated(5000), { maxBytes: 4096 })).rejects.toBeInstanceOf(PayloadTooLargeError);
      expect(await store.stat('limited/y')).toBeUndefined();
      expect(await store.list('limited/')).toEqual(['limited/x']);
    });

    it('keeps nothing of a body stream that fails midway', async () => {
      const failing = new Readable({ read() {} });
      failing.push(Buffer.alloc(1000));
      setTimeout(() => failing.destroy(new Error('client went away')), 10);
      await expect(store.put('broken/x', failing)).rejects.toThrow('client went away');
      expect(await store.stat('broken/x')).toBeUndefined();
      expect(await store.list('broken/')).toEqual([]);
    });

    it('overwrites, deletes idempotently and lists by prefix in key order', async () => {
      await store.put('p/2', Buffer.from('two'));
      await store.put('p/1', Buffer.from('one'));
      await store.put('p/1', Buffer.from('uno'));
      await store.put('q/1', Buffer.from('other'));
      expect((await readAll(await store.get('p/1'))).toString()).toBe('uno');
      expect(await store.list('p/')).toEqual(['p/1', 'p/2']);
      await store.delete('p/2');
      await store.delete('p/2');
      expect(await store.list('p/')).toEqual(['p/1']);
      expect(await store.list('', 2)).toHaveLength(2);
      await store.delete('never/stored');
    });

    it('treats a prefix as no object and lists by a prefix that is not a folder', async () => {
      await store.put('pre/fix/a', Buffer.from('a'));
      await store.put('pre/fixed', Buffer.from('b'));
      await store.put('pre/other', Buffer.from('c'));
      await expect(store.get('pre/fix')).rejects.toBeInstanceOf(NotFoundError);
      expect(await store.stat('pre/fix')).toBeUndefined();
      await store.delete('pre/fix');
      expect(await store.list('pre/fix')).toEqual(['pre/fix/a', 'pre/fixed']);
      expect(await store.list('pre/fix/')).toEqual(['pre/fix/a']);
    });

    it('lets a read that started before an overwrite finish with one whole version', async () => {
      const [before, after] = [Buffer.alloc(4 * 1024 * 1024, 1), Buffer.alloc(4 * 1024 * 1024, 2)];
      await store.put('swap/key', before);
      const reading = await store.get('swap/key');
      const rangeReading = await store.get('swap/key', { offset: 1, length: before.length - 2 });
      await store.put('swap/key', after);
      const read = await readAll(reading);
      expect(read.equals(before) || read.equals(after)).toBe(true);
      const rangeRead = await readAll(rangeReading);
      expect(rangeRead.equals(before.subarray(1, -1)) || rangeRead.equals(after.subarray(1, -1))).toBe(true);
      expect((await readAll(await store.get('swap/key'))).equals(after)).toBe(true);
    });

    it('answers NotFoundError for a missing object and undefined from stat', async () => {
      await expect(store.get('missing/key')).rejects.toBeInstanceOf(NotFoundError);
      expect(await store.stat('missing/key')).toBeUndefined();
    });

    it('reads byte ranges: the whole object, a middle, the last byte and nothing', async () => {
      const body = Buffer.from('0123456789abcdef');
      await store.put('range/r', body);
      expect(await readAll(await store.get('range/r', { offset: 0, length: 16 }))).toEqual(body);
      expect((await readAll(await store.get('range/r', { offset: 3, length: 5 }))).toString()).toBe('34567');
      expect((await readAll(await store.get('range/r', { offset: 15, length: 1 }))).toString()).toBe('f');
      expect(await readAll(await store.get('range/r', { offset: 7, length: 0 }))).toEqual(Buffer.alloc(0));
      expect(await readAll(await store.get('range/r', { offset: 16, length: 0 }))).toEqual(Buffer.alloc(0));
    });

    it('refuses a range that is not within the object, or not whole numbers ≥ 0, with a ValidationError', async () => {
      await store.put('range/r', Buffer.from('0123456789'));
      await store.put('range/empty', Buffer.alloc(0));
      const refused = [
        { offset: 0, length: 11 },
        { offset: 9, length: 2 },
        { offset: 10, length: 1 },
        { offset: 11, length: 0 },
        { offset: 50, length: 5 },
        { offset: -1, length: 2 },
        { offset: 0, length: -1 },
        { offset: 1.5, length: 2 },
        { offset: 0, length: Number.NaN },
      ];
      for (const range of refused) {
        await expect(store.get('range/r', range)).rejects.toBeInstanceOf(ValidationError);
      }
      await expect(store.get('range/empty', { offset: 0, length: 1 })).rejects.toBeInstanceOf(ValidationError);
      expect(await readAll(await store.get('range/empty', { offset: 0, length: 0 }))).toEqual(Buffer.alloc(0));
    });

    it('answers NotFoundError for a range of a missing object', async () => {
      await expect(store.get('missing/key', { offset: 0, length: 1 })).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.get('missing/key', { offset: 0, length: 0 })).rejects.toBeInstanceOf(NotFoundError);
    });

    it('reads a range across the middle of a 5 MB object', async () => {
      const body = randomBytes(5 * 1024 * 1024);
      await store.put('range/big', body);
      const [offset, length] = [2 * 1024 * 1024 + 17, 1024 * 1024 + 3];
      const read = await readAll(await store.get('range/big', { offset, length }));
      expect(read.length).toBe(length);
      expect(read.equals(body.subarray(offset, offset + length))).toBe(true);
    });

    it('refuses keys that could escape or are not portable', async () => {
      for (const key of ['', '../x', 'a/../b', '/abs', 'a//b', 'a/./b', 'sp ace', 'a\\b', 'a/', 'x'.repeat(256), `${'x/'.repeat(256)}x`]) {
        await expect(store.put(key, Buffer.from('x'))).rejects.toBeInstanceOf(ValidationError);
        await expect(store.get(key)).rejects.toBeInstanceOf(ValidationError);
        await expect(store.get(key, { offset: 0, length: 1 })).rejects.toBeInstanceOf(ValidationError);
        await expect(store.stat(key)).rejects.toBeInstanceOf(ValidationError);
        await expect(store.delete(key)).rejects.toBeInstanceOf(ValidationError);
      }
      await expect(store.list('../')).rejects.toBeInstanceOf(ValidationError);
      expect(await store.put(`${'k'.repeat(255)}/${'k'.repeat(255)}`, Buffer.from('x'))).toMatchObject({ size: 1 });
    });

    it('ends concurrent puts of one key with one whole value', async () => {
      const values = Array.from({ length: 8 }, (_, i) => Buffer.alloc(256 * 1024, i));
      await Promise.all(values.map((v) => store.put('race/key', v)));
      const stored = await readAll(await store.get('race/key'));
      expect(values.some((v) => v.equals(stored))).toBe(true);
      expect(await store.stat('race/key')).toMatchObject({ size: stored.length, sha256: sha256(stored) });
    });
  });
}
