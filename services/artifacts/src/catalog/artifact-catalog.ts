import { isAbsolute, posix } from 'node:path';
import { NotFoundError, ValidationError } from '@app/common';
import type { ArtifactFile, LocateArtifactReply } from '@app/contracts';
import type { TaskViewsStore } from '@app/read-models';
import type { ArtifactRecord } from '@app/task-domain';

export const DOWNLOADS_DIR = 'downloads';

/**
 * A task's artifacts as its events recorded them (the task view projection), never a look at a
 * workspace: the list survives an expired sandbox, and a path can only name a recorded file, so
 * traversal and symlink tricks have nothing to reach; a path through one of the symlinks the
 * scans saw leading out of the workspace is refused as outside it (400), as `..` is. The bytes
 * are in the object store.
 */
export class ArtifactCatalog {
  constructor(private readonly views: TaskViewsStore) {}

  list(taskId: string): ArtifactFile[] {
    return (this.views.get(taskId)?.artifacts ?? []).map(toFile);
  }

  locate(taskId: string, path: string): LocateArtifactReply {
    const view = this.views.get(taskId);
    // A recorded path as the listing gave it: on Linux a backslash is a letter of a file name
    // (`downloads/a\b.txt`), and a recorded file is the only thing an exact match can reach.
    const exact = view?.artifacts.find((a) => a.path === path);
    if (exact) return { file: toFile(exact), objectKey: exact.objectKey };
    // Anything else is read as a path, a backslash as a separator: `downloads\..\x` is outside.
    const normalized = posix.normalize(path.replace(/\\/g, '/'));
    if (isAbsolute(path) || path.includes('\0') || normalized === '..' || normalized.startsWith('../')) {
      throw new ValidationError(`path "${path}" is outside the workspace`);
    }
    // Through a symlink that leads out of the workspace: outside, not merely unknown.
    const link = view?.escapingLinks.find((l) => normalized === l || normalized.startsWith(`${l}/`));
    if (link) throw new ValidationError(`path "${path}" is outside the workspace: ${link} is a symlink leading out of it`);
    const record = view?.artifacts.find((a) => a.path === normalized);
    if (!record) throw new NotFoundError(`artifact "${path}"`);
    return { file: toFile(record), objectKey: record.objectKey };
  }
}

function toFile({ name, path, size, category, mimeType, modifiedAt }: ArtifactRecord): ArtifactFile {
  return { name, path, size, category, mimeType, modifiedAt };
}
