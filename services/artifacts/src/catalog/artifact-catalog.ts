import { lstat, readdir, stat } from 'node:fs/promises';
import { isAbsolute, join, posix } from 'node:path';
import { NotFoundError, ValidationError, WorkspaceLocator, WorkspacePathError, resolveInWorkspace } from '@app/common';
import { ArtifactFile, LocateArtifactReply } from '@app/contracts';
import { artifactTypeOf } from './artifact-types';

export const DOWNLOADS_DIR = 'downloads';
const MAX_LISTED = 10_000;
const MAX_DEPTH = 20;

/**
 * The files a task's agent left under `downloads/`. Symlinks are never followed while listing,
 * and a download path must resolve to a regular file inside the workspace.
 */
export class ArtifactCatalog {
  constructor(private readonly workspaces: WorkspaceLocator) {}

  async list(taskId: string): Promise<ArtifactFile[]> {
    const root = this.workspaces.pathOf(taskId);
    const files: ArtifactFile[] = [];
    await this.walk(root, DOWNLOADS_DIR, 0, files);
    return files.sort((a, b) => a.path.localeCompare(b.path));
  }

  async locate(taskId: string, path: string): Promise<LocateArtifactReply> {
    const root = this.workspaces.pathOf(taskId);
    const relative = posix.normalize(path.replace(/\\/g, '/'));
    // Checked on the text first: a task that never wrote a file has no workspace to resolve in.
    if (isAbsolute(path) || path.includes('\0') || relative === '..' || relative.startsWith('../')) {
      throw new ValidationError(`path "${path}" is outside the workspace`);
    }
    let absolute: string;
    try {
      absolute = await resolveInWorkspace(root, path);
    } catch (error) {
      if (error instanceof WorkspacePathError) throw new ValidationError(`path: ${error.message}`);
      throw new NotFoundError(`artifact "${path}"`); // no workspace yet: nothing was written
    }
    if (!relative.startsWith(`${DOWNLOADS_DIR}/`)) throw new NotFoundError(`artifact "${path}"`);
    const info = await stat(absolute).catch(() => undefined);
    if (!info?.isFile()) throw new NotFoundError(`artifact "${path}"`);
    return { file: toArtifact(relative, info.size, info.mtime), localPath: absolute };
  }

  private async walk(root: string, relDir: string, depth: number, out: ArtifactFile[]): Promise<void> {
    if (depth > MAX_DEPTH || out.length >= MAX_LISTED) return;
    const entries = await readdir(join(root, relDir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (out.length >= MAX_LISTED) return;
      const rel = `${relDir}/${entry.name}`;
      if (entry.isDirectory()) await this.walk(root, rel, depth + 1, out);
      else if (entry.isFile()) {
        const info = await lstat(join(root, rel)).catch(() => undefined);
        if (info?.isFile()) out.push(toArtifact(rel, info.size, info.mtime));
      }
    }
  }
}

function toArtifact(path: string, size: number, modified: Date): ArtifactFile {
  const name = posix.basename(path);
  return { name, path, size, ...artifactTypeOf(name), modifiedAt: modified.toISOString() };
}
