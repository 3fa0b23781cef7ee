import { createHash, randomBytes } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { Client } from 'minio';
import { PayloadTooLargeError } from '@app/common';
import { createObjectStore, objectStoreConfigFromEnv } from '../object-store.config';
import { describeObjectStoreContract } from '../testing/object-store.contract';
import type { MinioObjectStoreOptions } from './minio-object-store';
import { MinioObjectStore } from './minio-object-store';
import { MultipartUpload } from './multipart-upload';

const REQUIRED = ['MINIO_ENDPOINT', 'MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY'] as const;
const missing = REQUIRED.filter((name) => !process.env[name]);
if (missing.length > 0) {
  throw new Error(
    `MinIO int specs need a server: ${missing.join(', ')} unset. Run ` +
      '`minio_env="$(bash infra/dev/ensure-minio.sh)"; set -a; eval "$minio_env"; set +a` first.',
  );
}
const server = {
  endpoint: process.env.MINIO_ENDPOINT!,
  accessKey: process.env.MINIO_ACCESS_KEY!,
  secretKey: process.env.MINIO_SECRET_KEY!,
};

/** Talks to the server behind the store's back: what is really in the bucket, and cleanup. */
function adminClient(): Client {
  const url = new URL(server.endpoint);
  const { accessKey, secretKey } = server;
  const port = url.port ? Number(url.port) : undefined;
  return new Client({ endPoint: url.hostname, port, useSSL: url.protocol === 'https:', accessKey, secretKey, pathStyle: true });
}

async function allKeys(admin: Client, bucket: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of admin.listObjectsV2(bucket, '', true)) if (item.name) keys.push(item.name);
  return keys;
}

async function incompleteUploads(admin: Client, bucket: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const upload of admin.listIncompleteUploads(bucket, '', true)) keys.push(upload.key);
  return keys;
}

async function removeBucket(admin: Client, bucket: string): Promise<void> {
  if (!(await admin.bucketExists(bucket))) return;
  for (const key of await incompleteUploads(admin, bucket)) await admin.removeIncompleteUpload(bucket, key);
  for (const key of await allKeys(admin, bucket)) await admin.removeObject(bucket, key);
  await admin.removeBucket(bucket);
}

/** A fresh bucket per test, so tests never see each other's objects. */
async function withBucket(): Promise<{ options: MinioObjectStoreOptions; store: MinioObjectStore; cleanup(): Promise<void> }> {
  const options = { ...server, bucket: `ats-test-${randomBytes(6).toString('hex')}` };
  const store = new MinioObjectStore(options);
  const admin = adminClient();
  const cleanup = async () => {
    await store.close();
    await removeBucket(admin, options.bucket);
  };
  return { options, store, cleanup };
}

/** `size` bytes of a repeating random block, generated lazily, and the sha256 they will have. */
function generated(size: number): { body: Readable; sha256: string } {
  const block = randomBytes(1024 * 1024);
  const hash = createHash('sha256');
  for (let n = 0; n < size; n += block.length) hash.update(block.subarray(0, Math.min(block.length, size - n)));
  let sent = 0;
  const body = new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      const n = Math.min(block.length, size - sent);
      sent += n;
      this.push(block.subarray(0, n));
    },
  });
  return { body, sha256: hash.digest('hex') };
}

/** Passes bytes through until `limit`, then fails with `error`, like a client that drops. */
function failAfter(limit: number, error: Error): Transform {
  let passed = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      passed += chunk.length;
      done(passed > limit ? error : null, chunk);
    },
  });
}

async function sha256Of(stream: Readable): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { size, sha256: hash.digest('hex') };
}

describeObjectStoreContract('MinIO', withBucket);

describe('MinIO object store against a real server', () => {
  let fixture: Awaited<ReturnType<typeof withBucket>>;
  let admin: Client;
  beforeEach(async () => {
    fixture = await withBucket();
    admin = adminClient();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await fixture.cleanup();
  });

  it('streams a 64 MB body as a multipart upload and leaves no temp object or upload behind', async () => {
    const size = 64 * 1024 * 1024;
    const parts = jest.spyOn(MultipartUpload.prototype, 'add');
    const { body, sha256 } = generated(size);
    expect(await fixture.store.put('big/64mb.bin', body, { contentType: 'application/x-tar' })).toEqual({ size, sha256 });
    expect(parts).toHaveBeenCalledTimes(8);
    expect(await fixture.store.stat('big/64mb.bin')).toEqual({ size, sha256, contentType: 'application/x-tar' });
    expect(await sha256Of(await fixture.store.get('big/64mb.bin'))).toEqual({ size, sha256 });
    expect(await allKeys(admin, fixture.options.bucket)).toEqual(['big/64mb.bin']);
    expect(await incompleteUploads(admin, fixture.options.bucket)).toEqual([]);
  }, 60_000);

  it('refuses a multipart body over maxBytes and keeps the old value, with no temp object or upload left', async () => {
    await fixture.store.put('limited/big', Buffer.from('old'));
    const { body } = generated(40 * 1024 * 1024);
    const put = fixture.store.put('limited/big', body, { maxBytes: 20 * 1024 * 1024 });
    await expect(put).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect((await sha256Of(await fixture.store.get('limited/big'))).size).toBe(3);
    expect(await allKeys(admin, fixture.options.bucket)).toEqual(['limited/big']);
    expect(await incompleteUploads(admin, fixture.options.bucket)).toEqual([]);
  }, 60_000);

  it('keeps nothing of a multipart body that fails after some parts were sent', async () => {
    const { body } = generated(20 * 1024 * 1024);
    const failing = body.pipe(failAfter(18 * 1024 * 1024, new Error('client went away')));
    await expect(fixture.store.put('broken/big', failing)).rejects.toThrow('client went away');
    expect(await allKeys(admin, fixture.options.bucket)).toEqual([]);
    expect(await incompleteUploads(admin, fixture.options.bucket)).toEqual([]);
  }, 60_000);

  it('reports a body that fails while the bucket is still being created, without an unhandled error', async () => {
    const failing = new Readable({ read() {} });
    setImmediate(() => failing.destroy(new Error('client went away')));
    await expect(fixture.store.put('early/x', failing)).rejects.toThrow('client went away');
    expect(await fixture.store.list('')).toEqual([]);
  });

  it('ends concurrent multipart puts of one key with one whole value', async () => {
    const bodies = [generated(12 * 1024 * 1024), generated(12 * 1024 * 1024)];
    await Promise.all(bodies.map(({ body }) => fixture.store.put('race/big', body)));
    const stored = await sha256Of(await fixture.store.get('race/big'));
    expect(bodies.map((b) => b.sha256)).toContain(stored.sha256);
    expect(await fixture.store.stat('race/big')).toMatchObject(stored);
    expect(await allKeys(admin, fixture.options.bucket)).toEqual(['race/big']);
  }, 60_000);

  it('creates its bucket on first use, and a second store on the same bucket shares it', async () => {
    expect(await admin.bucketExists(fixture.options.bucket)).toBe(false);
    await fixture.store.put('shared/x', Buffer.from('x'));
    const other = new MinioObjectStore(fixture.options);
    expect(await other.list('shared/')).toEqual(['shared/x']);
    await other.close();
  });

  it('never lists the temp object of a put in flight, and a new store leaves a recent one alone', async () => {
    await fixture.store.put('z/last', Buffer.from('z'));
    await admin.putObject(fixture.options.bucket, '~uploads/in-flight', Buffer.from('partial'));
    expect(await fixture.store.list('')).toEqual(['z/last']);
    const fresh = new MinioObjectStore(fixture.options);
    await fresh.put('a/first', Buffer.from('a'));
    expect(await fresh.list('', 5)).toEqual(['a/first', 'z/last']);
    await fresh.close();
    expect(await allKeys(admin, fixture.options.bucket)).toEqual(['a/first', 'z/last', '~uploads/in-flight']);
  });

  it('is selected by OBJECT_STORE=minio with the MINIO_* variables', async () => {
    const env = {
      OBJECT_STORE: 'minio',
      MINIO_ENDPOINT: server.endpoint,
      MINIO_ACCESS_KEY: server.accessKey,
      MINIO_SECRET_KEY: server.secretKey,
    };
    const store = createObjectStore(objectStoreConfigFromEnv({ ...env, MINIO_BUCKET: fixture.options.bucket }));
    await store.put('configured', Buffer.from('yes'));
    expect(await fixture.store.list('')).toEqual(['configured']);
    await store.close?.();
    expect(objectStoreConfigFromEnv(env)).toMatchObject({ kind: 'minio', bucket: 'ats' });
  });

  it('names every missing or malformed MINIO_* variable', () => {
    expect(() => objectStoreConfigFromEnv({ OBJECT_STORE: 'minio', MINIO_ENDPOINT: server.endpoint })).toThrow(
      'OBJECT_STORE=minio needs MINIO_ACCESS_KEY, MINIO_SECRET_KEY',
    );
    const keys = { OBJECT_STORE: 'minio', MINIO_ACCESS_KEY: 'a', MINIO_SECRET_KEY: 'b' };
    expect(() => objectStoreConfigFromEnv({ ...keys, MINIO_ENDPOINT: '127.0.0.1:9000' })).toThrow(/MINIO_ENDPOINT must be a URL/);
    expect(() => objectStoreConfigFromEnv({ ...keys, MINIO_ENDPOINT: 'http://h:9000/path' })).toThrow(/MINIO_ENDPOINT must be a URL/);
    expect(() => objectStoreConfigFromEnv({ ...keys, MINIO_ENDPOINT: 'http://h:9000', MINIO_BUCKET: 'Bad_Name' })).toThrow(/MINIO_BUCKET/);
    expect(() => objectStoreConfigFromEnv({ OBJECT_STORE: 's3' })).toThrow('OBJECT_STORE must be "local" or "minio"');
  });
});
