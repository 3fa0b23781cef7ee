import { intFromEnv } from '@app/common';

/** Caps on one create request's uploads and on what each uploaded archive may unpack to. */
export interface UploadLimits {
  /** All uploaded files together, in bytes (the API enforces the same cap on the request body). */
  readonly uploadMaxBytes: number;
  readonly uploadMaxFiles: number;
  readonly zipMaxEntries: number;
  /** Per archive, counted on the real decompressed bytes, not only the declared sizes. */
  readonly zipMaxUncompressedBytes: number;
  /** Per entry, uncompressed : compressed; only checked for entries above 1 MiB. */
  readonly zipMaxRatio: number;
}

export function uploadLimitsFromEnv(env: NodeJS.ProcessEnv): UploadLimits {
  return {
    uploadMaxBytes: intFromEnv(env, 'UPLOAD_MAX_BYTES', 104_857_600, { min: 1 }),
    // 100 as in the API's config and docs/operations/configuration.md: both sides must refuse the same requests.
    uploadMaxFiles: intFromEnv(env, 'UPLOAD_MAX_FILES', 100, { min: 1 }),
    zipMaxEntries: intFromEnv(env, 'ZIP_MAX_ENTRIES', 10_000, { min: 1 }),
    zipMaxUncompressedBytes: intFromEnv(env, 'ZIP_MAX_UNCOMPRESSED_BYTES', 1024 ** 3, { min: 1 }),
    zipMaxRatio: intFromEnv(env, 'ZIP_MAX_RATIO', 200, { min: 1 }),
  };
}
