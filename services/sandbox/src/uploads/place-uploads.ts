import { chmod, chown, copyFile, constants, lstat, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PayloadTooLargeError, ValidationError } from '@app/common';
import type { LocalUpload } from './local-upload';
import type { FileOwner } from '../provider/sandbox-provider.port';
import { extractZip } from './extract-zip';
import { moveInto } from './move-into';
import type { UploadLimits } from './upload-limits';

/**
 * Puts a create request's uploads at the workspace root: plain files under their bare name, each
 * `.zip` extracted with its folders (the archive itself is not kept). All or nothing across the
 * whole batch: everything is built in a scratch folder inside the workspace (its own filesystem:
 * what an upload unpacks counts against the quota, and the moves are renames), and only when
 * every upload is in place there does anything move in (see moveInto), so a failure at the third
 * file leaves nothing of the first two. No command of the task runs meanwhile (the call holds
 * the task's session), and the scratch's random name was free. The staged files are removed in every case.
 */
export async function placeUploads(
  files: readonly LocalUpload[],
  workspaceDir: string,
  limits: UploadLimits,
  owner?: FileOwner,
): Promise<void> {
  try {
    await checkBatch(files, limits);
    const scratch = await mkdtemp(join(workspaceDir, '.uploads-'));
    try {
      for (const file of files) {
        if (file.name.toLowerCase().endsWith('.zip')) await extractZip(file.stagedPath, scratch, limits, owner, file.name);
        else await placeFile(file, scratch, owner);
      }
      await moveInto(scratch, workspaceDir, (path) => new ValidationError(`files: "${path}" already exists in the workspace`));
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  } finally {
    await Promise.all(files.map((f) => rm(f.stagedPath, { force: true })));
  }
}

async function checkBatch(files: readonly LocalUpload[], limits: UploadLimits): Promise<void> {
  if (files.length > limits.uploadMaxFiles) {
    throw new PayloadTooLargeError(`at most ${limits.uploadMaxFiles} files per request (UPLOAD_MAX_FILES)`);
  }
  let total = 0;
  for (const file of files) {
    if (!isBareName(file.name)) throw new ValidationError(`files: invalid file name "${file.name.slice(0, 200)}"`);
    total += (await stat(file.stagedPath)).size;
    if (total > limits.uploadMaxBytes)
      throw new PayloadTooLargeError(`uploads exceed ${limits.uploadMaxBytes} bytes in total (UPLOAD_MAX_BYTES)`);
  }
}

/** One file name, no folder: no separator, not `.` or `..`, no NUL, short enough for a filesystem. */
function isBareName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name) && Buffer.byteLength(name) <= 255;
}

async function placeFile(file: LocalUpload, scratch: string, owner?: FileOwner): Promise<void> {
  const target = join(scratch, file.name);
  if (
    await lstat(target).then(
      () => true,
      () => false,
    )
  ) {
    throw new ValidationError(`files: "${file.name}" is uploaded twice, or also comes out of an archive`);
  }
  await rename(file.stagedPath, target).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EXDEV') throw error;
    await copyFile(file.stagedPath, target, constants.COPYFILE_EXCL);
  });
  await chmod(target, 0o644);
  if (owner) await chown(target, owner.uid, owner.gid);
}
