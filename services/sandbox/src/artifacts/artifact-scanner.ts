import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ObjectStore } from '@app/object-store';
import { ArtifactRecord, artifactTypeOf } from '@app/task-domain';

export const DOWNLOADS_DIR = 'downloads';

export interface ScanLimits {
  /** Files recorded at most; the rest are left out (and logged by the caller). */
  readonly maxFiles: number;
  readonly maxDepth: number;
}

export const DEFAULT_SCAN_LIMITS: ScanLimits = { maxFiles: 1000, maxDepth: 20 };

/**
 * Lists the files under the workspace's `downloads/` and makes sure each one's bytes are in the
 * object store, under a key named by its SHA-256 (so unchanged content is never stored twice).
 * Symlinks are never followed: a link cannot smuggle a host file into the artifacts.
 * A file whose size and modification time match what the task already recorded is not re-read.
 */
export class ArtifactScanner {
  constructor(
    private readonly objects: ObjectStore,
    private readonly limits: ScanLimits = DEFAULT_SCAN_LIMITS,
  ) {}

  async scan(taskId: string, workspaceRoot: string, known: Readonly<Record<string, ArtifactRecord>>): Promise<ArtifactRecord[]> {
    const files: { path: string; size: number; modifiedAt: string }[] = [];
    await this.walk(workspaceRoot, DOWNLOADS_DIR, 0, files);
    const records: ArtifactRecord[] = [];
    for (const file of files) {
      const before = known[file.path];
      if (before && before.size === file.size && before.modifiedAt === file.modifiedAt) {
        records.push(before);
        continue;
      }
      const stored = await this.store(taskId, join(workspaceRoot, file.path), before);
      if (stored) records.push({ ...file, name: posix.basename(file.path), ...artifactTypeOf(file.path), ...stored });
    }
    return records;
  }

  /** Hashes first: content the task already has is not uploaded again. Undefined if the file changed meanwhile. */
  private async store(taskId: string, absolute: string, before: ArtifactRecord | undefined): Promise<{ sha256: string; objectKey: string; size: number } | undefined> {
    const hash = createHash('sha256');
    await pipeline(createReadStream(absolute), hash);
    const sha256 = hash.digest('hex');
    if (before?.sha256 === sha256) return { sha256, objectKey: before.objectKey, size: before.size };
    const objectKey = `artifacts/${taskId}/${sha256}`;
    const existing = await this.objects.stat(objectKey);
    if (existing) return { sha256, objectKey, size: existing.size };
    const put = await this.objects.put(objectKey, createReadStream(absolute));
    if (put.sha256 === sha256) return { sha256, objectKey, size: put.size };
    // Written to while we read it: drop this copy; the next tool call records the settled file.
    await this.objects.delete(objectKey);
    return undefined;
  }

  private async walk(root: string, relDir: string, depth: number, out: { path: string; size: number; modifiedAt: string }[]): Promise<void> {
    if (depth > this.limits.maxDepth || out.length >= this.limits.maxFiles) return;
    const entries = await readdir(join(root, relDir), { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (out.length >= this.limits.maxFiles) return;
      const rel = `${relDir}/${entry.name}`;
      if (entry.isDirectory()) await this.walk(root, rel, depth + 1, out);
      else if (entry.isFile()) {
        const info = await lstat(join(root, rel)).catch(() => undefined);
        if (info?.isFile()) out.push({ path: rel, size: info.size, modifiedAt: info.mtime.toISOString() });
      }
    }
  }
}
