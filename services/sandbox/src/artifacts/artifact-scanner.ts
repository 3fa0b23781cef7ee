import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import type { ObjectStore } from '@app/object-store';
import { ArtifactRecord, artifactTypeOf } from '@app/task-domain';
import { NoFollowDir, NoFollowEntry, OpenedFile } from '../workspace/no-follow-dir';

export const DOWNLOADS_DIR = 'downloads';

export interface ScanLimits {
  /** Files recorded at most; the rest are left out, and the scan says so. */
  readonly maxFiles: number;
  readonly maxDepth: number;
}

export const DEFAULT_SCAN_LIMITS: ScanLimits = { maxFiles: 1000, maxDepth: 20 };

export interface ScanResult {
  /** Every artifact the task has now (unchanged ones as they were recorded). */
  readonly records: ArtifactRecord[];
  /** What was left out or renamed, and why: one line each, already redacted, for the tool output. */
  readonly notes: string[];
  /** Symlinks (downloads itself included) whose target leads out of the workspace, redacted, at most MAX_LINKS. */
  readonly escapingLinks: string[];
}

/** Masks secret values in a string derived from the workspace (a file name, a path). */
export type Redact = (text: string) => string;

interface FoundFile {
  readonly dir: NoFollowDir;
  readonly name: string;
  /** The path as recorded: workspace-relative, secrets masked. */
  readonly path: string;
  readonly size: number;
  readonly modifiedAt: string;
}

const MAX_NOTES = 20;
const MAX_LINKS = 100;
/** Where the workspace is inside the sandbox: an absolute link there stays inside. */
const SANDBOX_ROOT = '/workspace';

/**
 * Lists the regular files under the workspace's `downloads/` and makes sure each one's bytes are
 * in the object store, under a key named by its SHA-256 (unchanged content is never stored twice).
 *
 * The workspace belongs to untrusted code and this runs with the service's privileges, so nothing
 * is reached through a link: `downloads` itself, every folder below it and every file are opened
 * one name at a time without following symlinks (NoFollowDir), and a file is hashed and uploaded
 * from the one descriptor opened for it, so swapping names meanwhile changes nothing. FIFOs,
 * sockets and devices are never opened. A secret value in a file name is masked in the recorded
 * path, since the path goes into events, listings and headers.
 */
export class ArtifactScanner {
  constructor(
    private readonly objects: ObjectStore,
    private readonly limits: ScanLimits = DEFAULT_SCAN_LIMITS,
  ) {}

  /**
   * `since` (ms): only entries changed from then on get a note, so a symlink left in downloads/
   * is mentioned by the call that made it, not by every call after it. Bounds hit are always said.
   */
  async scan(
    taskId: string,
    workspaceRoot: string,
    known: Readonly<Record<string, ArtifactRecord>>,
    options: { redact?: Redact; since?: number } = {},
  ): Promise<ScanResult> {
    const redact = options.redact ?? ((text: string) => text);
    const notes = new Notes(redact, options.since ?? 0);
    const root = await NoFollowDir.open(workspaceRoot);
    const opened: NoFollowDir[] = [root];
    try {
      const links = new EscapingLinks(redact);
      const downloads = await root.openDir(DOWNLOADS_DIR);
      if (!downloads) {
        const entry = await root.entry(DOWNLOADS_DIR);
        if (entry)
          notes.add(entry, `${DOWNLOADS_DIR} is ${describe(entry.kind, entry.special)}, not a folder: nothing under it is recorded`);
        if (entry?.kind === 'symlink') links.consider(DOWNLOADS_DIR, await root.readLink(DOWNLOADS_DIR));
        return { records: [], notes: notes.lines(), escapingLinks: links.list() };
      }
      opened.push(downloads);
      const files = new Map<string, FoundFile>();
      await this.walk(downloads, DOWNLOADS_DIR, 0, files, opened, notes, redact, links);
      const records: ArtifactRecord[] = [];
      for (const file of files.values()) {
        const before = known[file.path];
        if (before && before.size === file.size && before.modifiedAt === file.modifiedAt) {
          records.push(before);
          continue;
        }
        const stored = await this.store(taskId, file, before);
        if (stored) records.push({ path: file.path, name: posix.basename(file.path), ...artifactTypeOf(file.path), ...stored });
      }
      return { records, notes: notes.lines(), escapingLinks: links.list() };
    } finally {
      await Promise.all(opened.map((d) => d.close().catch(() => undefined)));
    }
  }

  /** Hashes first: content the task already has is not uploaded again. Undefined when the file is gone or changed meanwhile. */
  private async store(
    taskId: string,
    file: FoundFile,
    before: ArtifactRecord | undefined,
  ): Promise<{ sha256: string; objectKey: string; size: number; modifiedAt: string } | undefined> {
    const opened = await file.dir.openFile(file.name);
    if (!opened) return undefined;
    try {
      const modifiedAt = opened.stats.mtime.toISOString();
      const sha256 = await sha256Of(opened);
      if (before?.sha256 === sha256) return { sha256, objectKey: before.objectKey, size: before.size, modifiedAt };
      const objectKey = `artifacts/${taskId}/${sha256}`;
      const existing = await this.objects.stat(objectKey);
      if (existing) return { sha256, objectKey, size: existing.size, modifiedAt };
      const put = await this.objects.put(objectKey, opened.handle.createReadStream({ start: 0, autoClose: false }));
      if (put.sha256 === sha256) return { sha256, objectKey, size: put.size, modifiedAt };
      // Written to while we read it: drop this copy; the next tool call records the settled file.
      await this.objects.delete(objectKey);
      return undefined;
    } finally {
      await opened.handle.close();
    }
  }

  private async walk(
    dir: NoFollowDir,
    rel: string,
    depth: number,
    out: Map<string, FoundFile>,
    opened: NoFollowDir[],
    notes: Notes,
    redact: Redact,
    links: EscapingLinks,
  ): Promise<void> {
    for (const entry of await dir.list()) {
      const path = `${rel}/${entry.name}`;
      if (out.size >= this.limits.maxFiles) {
        notes.always(`more than ${this.limits.maxFiles} files under ${DOWNLOADS_DIR}/: the rest are not recorded`);
        return;
      }
      if (entry.kind === 'dir') {
        if (depth + 1 > this.limits.maxDepth) {
          notes.always(`${path} is more than ${this.limits.maxDepth} folders deep: not recorded`);
          continue;
        }
        const sub = await dir.openDir(entry.name);
        if (!sub) continue;
        opened.push(sub);
        await this.walk(sub, path, depth + 1, out, opened, notes, redact, links);
      } else if (entry.kind === 'file' && entry.stats) {
        const recorded = redact(path);
        if (out.has(recorded)) {
          notes.add(entry, `${recorded} is not recorded: another file has the same name once secrets are masked`);
          continue;
        }
        if (recorded !== path) notes.add(entry, `${recorded} is recorded under this name: its real name contains a secret`);
        out.set(recorded, { dir, name: entry.name, path: recorded, size: entry.stats.size, modifiedAt: entry.stats.mtime.toISOString() });
      } else {
        notes.add(entry, `${path} is ${describe(entry.kind, entry.special)}: not recorded`);
        if (entry.kind === 'symlink') links.consider(path, await dir.readLink(entry.name).catch(() => ''));
      }
    }
  }
}

async function sha256Of(file: OpenedFile): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of file.handle.createReadStream({ start: 0, autoClose: false })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function describe(kind: string, special?: string): string {
  if (kind === 'symlink') return 'a symlink (never followed)';
  return special ?? `a ${kind}`;
}

/** The scan's remarks, masked and bounded: a folder of 10,000 FIFOs must not flood the tool output. */
class Notes {
  private readonly items: string[] = [];
  private dropped = 0;

  constructor(
    private readonly redact: Redact,
    private readonly since: number,
  ) {}

  /** A remark about `entry`, kept only if the entry changed since the scan's `since`. */
  add(entry: NoFollowEntry, line: string): void {
    // An entry whose name is unusable has no stats: always worth saying.
    if (entry.stats && entry.stats.mtimeMs < this.since && entry.stats.ctimeMs < this.since) return;
    this.always(line);
  }

  always(line: string): void {
    const masked = this.redact(line);
    if (this.items.includes(masked)) return;
    if (this.items.length < MAX_NOTES) this.items.push(masked);
    else this.dropped++;
  }

  lines(): string[] {
    return this.dropped > 0 ? [...this.items, `… and ${this.dropped} more`] : [...this.items];
  }
}

/** The links under downloads/ whose target, read as text (never followed), leads out of the workspace. */
class EscapingLinks {
  private readonly found: string[] = [];

  constructor(private readonly redact: Redact) {}

  consider(path: string, target: string): void {
    if (this.found.length >= MAX_LINKS || !leadsOutside(path, target)) return;
    this.found.push(this.redact(path));
  }

  list(): string[] {
    return [...this.found];
  }
}

/** Whether `target`, the text of the link at workspace-relative `path`, names something outside the workspace. */
export function leadsOutside(path: string, target: string): boolean {
  if (target.startsWith('/')) {
    const inside = posix.normalize(target);
    return inside !== SANDBOX_ROOT && !inside.startsWith(`${SANDBOX_ROOT}/`);
  }
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  return resolved === '..' || resolved.startsWith('../');
}
