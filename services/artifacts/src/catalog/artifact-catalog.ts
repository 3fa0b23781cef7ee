import { isAbsolute, posix } from 'node:path';
import { NotFoundError, ValidationError } from '@app/common';
import { ArtifactFile, LocateArtifactReply } from '@app/contracts';
import { TaskViewsStore } from '@app/read-models';
import { ArtifactRecord } from '@app/task-domain';

export const DOWNLOADS_DIR = 'downloads';

/**
 * A task's artifacts as its events recorded them (the task view projection), never a look at a
 * workspace: the list survives an expired sandbox, and a path can only name a recorded file, so
 * traversal and symlink tricks have nothing to reach. The bytes are in the object store.
 */
export class ArtifactCatalog {
  constructor(private readonly views: TaskViewsStore) {}

  list(taskId: string): ArtifactFile[] {
    return (this.views.get(taskId)?.artifacts ?? []).map(toFile);
  }

  locate(taskId: string, path: string): LocateArtifactReply {
    const normalized = posix.normalize(path.replace(/\\/g, '/'));
    if (isAbsolute(path) || path.includes('\0') || normalized === '..' || normalized.startsWith('../')) {
      throw new ValidationError(`path "${path}" is outside the workspace`);
    }
    const record = this.views.get(taskId)?.artifacts.find((a) => a.path === normalized);
    if (!record) throw new NotFoundError(`artifact "${path}"`);
    return { file: toFile(record), objectKey: record.objectKey };
  }
}

function toFile({ name, path, size, category, mimeType, modifiedAt }: ArtifactRecord): ArtifactFile {
  return { name, path, size, category, mimeType, modifiedAt };
}
