import { join, resolve } from 'node:path';
import { dataDirFromEnv } from '@app/common';
import { LocalObjectStore } from './local/local-object-store';
import type { MinioObjectStore as MinioObjectStoreClass, MinioObjectStoreOptions } from './minio/minio-object-store';
import type { ObjectStore } from './object-store.port';

export type ObjectStoreConfig = { readonly kind: 'local'; readonly root: string } | ({ readonly kind: 'minio' } & MinioObjectStoreOptions);

const MINIO_REQUIRED = ['MINIO_ENDPOINT', 'MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY'] as const;
const DEFAULT_BUCKET = 'ats';
/** S3's bucket naming rules, less the rarely used dots (they break TLS with virtual-host style). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/**
 * `OBJECT_STORE=local` (default): files under DATA_DIR/objects. `OBJECT_STORE=minio`: the bucket
 * `MINIO_BUCKET` (default `ats`, created if missing) on `MINIO_ENDPOINT` (`http(s)://host:port`)
 * with `MINIO_ACCESS_KEY` / `MINIO_SECRET_KEY`.
 */
export function objectStoreConfigFromEnv(env: NodeJS.ProcessEnv): ObjectStoreConfig {
  const kind = env.OBJECT_STORE?.trim() || 'local';
  if (kind === 'local') return { kind, root: resolve(join(dataDirFromEnv(env), 'objects')) };
  if (kind === 'minio') return minioConfigFromEnv(env);
  throw new Error(`OBJECT_STORE must be "local" or "minio", got "${kind}"`);
}

function minioConfigFromEnv(env: NodeJS.ProcessEnv): ObjectStoreConfig {
  const [endpoint, accessKey, secretKey] = MINIO_REQUIRED.map((name) => env[name]?.trim() ?? '');
  const missing = MINIO_REQUIRED.filter((name) => !env[name]?.trim());
  if (missing.length > 0) throw new Error(`OBJECT_STORE=minio needs ${missing.join(', ')}`);
  const url = URL.canParse(endpoint) ? new URL(endpoint) : undefined;
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.username) {
    throw new Error(`MINIO_ENDPOINT must be a URL like http://127.0.0.1:9000 (no path or credentials), got "${endpoint}"`);
  }
  const bucket = env.MINIO_BUCKET?.trim() || DEFAULT_BUCKET;
  if (!BUCKET_NAME.test(bucket)) throw new Error(`MINIO_BUCKET must be 3-63 lowercase letters, digits or "-", got "${bucket}"`);
  return { kind: 'minio', endpoint, accessKey, secretKey, bucket };
}

export function createObjectStore(config: ObjectStoreConfig): ObjectStore {
  switch (config.kind) {
    case 'local':
      return new LocalObjectStore(config.root);
    case 'minio': {
      // Loaded only when chosen: the MinIO client would cost every all-in-one start a few hundred
      // ms of CPU for a store it never uses (BENCHMARKS.md, "Footprint").
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when chosen, see above
      const { MinioObjectStore } = require('./minio/minio-object-store') as { MinioObjectStore: typeof MinioObjectStoreClass };
      return new MinioObjectStore(config);
    }
    default: {
      const _: never = config;
      throw new Error(`unknown object store ${JSON.stringify(_)}`);
    }
  }
}
