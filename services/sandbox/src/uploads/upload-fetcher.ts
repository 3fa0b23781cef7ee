import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { PayloadTooLargeError } from '@app/common';
import type { UploadRef } from '@app/contracts';
import type { ObjectStore } from '@app/object-store';
import type { LocalUpload } from './local-upload';
import type { UploadLimits } from './upload-limits';

/**
 * Brings a create request's uploads from the object store onto this instance's disk (ZIP
 * extraction needs random access), checking the sizes the API declared before any byte moves.
 * The local copies live only while `use` runs.
 */
export class UploadFetcher {
  constructor(
    private readonly objects: ObjectStore,
    private readonly stagingRoot: string,
    private readonly limits: UploadLimits,
  ) {}

  async use<T>(taskId: string, refs: readonly UploadRef[], body: (local: LocalUpload[]) => Promise<T>): Promise<T> {
    const total = refs.reduce((sum, r) => sum + r.size, 0);
    if (total > this.limits.uploadMaxBytes)
      throw new PayloadTooLargeError(`uploads exceed ${this.limits.uploadMaxBytes} bytes in total (UPLOAD_MAX_BYTES)`);
    const dir = join(this.stagingRoot, taskId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    try {
      const local: LocalUpload[] = [];
      for (const [i, ref] of refs.entries()) {
        const stagedPath = join(dir, String(i));
        await pipeline(await this.objects.get(ref.objectKey), createWriteStream(stagedPath, { mode: 0o600 }));
        local.push({ name: ref.name, stagedPath });
      }
      return await body(local);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
