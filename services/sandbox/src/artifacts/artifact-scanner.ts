import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { Readable } from 'node:stream';
import type { ObjectStore } from '@app/object-store';
import type { ArtifactRecord, StoredArtifacts } from '@app/task-domain';
import { NOTHING_STORED, artifactTypeOf } from '@app/task-domain';
import type { NoFollowEntry, OpenedFile } from '../workspace/no-follow-dir';
import { NoFollowDir } from '../workspace/no-follow-dir';
import { ArtifactAllowance } from './artifact-allowance';

export const DOWNLOADS_DIR = 'downloads';

export interface ScanLimits {
  /** Files recorded at most; the rest are left out, and the scan says so. */
  readonly maxFiles: number;
  readonly maxDepth: number;
  /**
   * Bytes the object store may hold for one task (SANDBOX_DISK_QUOTA_BYTES), each file counted at
   * its apparent size: a file that would pass it is neither read nor stored, and the scan says so.
   */
  readonly maxStoredBytes: number;
}

/** maxStoredBytes: SANDBOX_DISK_QUOTA_BYTES's default; the service passes the configured value. */
export const DEFAULT_SCAN_LIMITS: ScanLimits = { maxFiles: 1000, maxDepth: 20, maxStoredBytes: 1024 ** 3 };

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
  readonly entry: NoFollowEntry;
  readonly name: string;
  /** The path as recorded: workspace-relative, secrets masked. */
  readonly path: string;
  readonly size: number;
  readonly modifiedAt: string;
}

interface StoredFile {
  readonly sha256: string;
  readonly objectKey: string;
  readonly size: number;
  readonly modifiedAt: string;
}

/** The file was not read, or was read and not kept: storing it would pass the task's allowance. */
const OVER_QUOTA = Symbol('over quota');

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
 *
 * What the store holds for a task is bounded (ScanLimits.maxStoredBytes), counting a file's
 * apparent size, not the blocks it takes: a sparse file of 1000M takes a few KB in the workspace
 * but 1000M in the store, and as long to read. So a file is checked against what is left before a
 * byte of it is read, and only that many bytes are ever read from it.
 */
export class ArtifactScanner {
  constructor(
    private readonly objects: ObjectStore,
    private readonly limits: ScanLimits = DEFAULT_SCAN_LIMITS,
  ) {}

  /**
   * `since` (ms): only entries changed from then on get a note, so a symlink left in downloads/
   * is mentioned by the call that made it, not by every call after it. Bounds hit are always said.
   * `stored`: what the store already holds for the task (its state's `storedArtifacts`), counted
   * against maxStoredBytes; absent, nothing.
   */
  async scan(
    taskId: string,
    workspaceRoot: string,
    known: Readonly<Record<string, ArtifactRecord>>,
    options: { redact?: Redact; since?: number; stored?: StoredArtifacts } = {},
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
      // One allowance for the whole scan: several new files share what is left.
      const allowance = new ArtifactAllowance(this.limits.maxStoredBytes, options.stored ?? NOTHING_STORED);
      for (const file of files.values()) {
        const before = known[file.path];
        if (before && before.size === file.size && before.modifiedAt === file.modifiedAt) {
          records.push(before);
          continue;
        }
        const stored = allowance.mayHold(file.size) ? await this.store(taskId, file, before, allowance) : OVER_QUOTA;
        if (stored === OVER_QUOTA) notes.add(file.entry, overQuotaNote(file, allowance));
        else if (stored) records.push({ path: file.path, name: posix.basename(file.path), ...artifactTypeOf(file.path), ...stored });
      }
      return { records, notes: notes.lines(), escapingLinks: links.list() };
    } finally {
      await Promise.all(opened.map((d) => d.close().catch(() => undefined)));
    }
  }

  /**
   * Hashes first: content the task already has is not uploaded again, nor counted again. Undefined
   * when the file is gone or changed meanwhile; OVER_QUOTA when its bytes are new and do not fit.
   */
  private async store(
    taskId: string,
    file: FoundFile,
    before: ArtifactRecord | undefined,
    allowance: ArtifactAllowance,
  ): Promise<StoredFile | typeof OVER_QUOTA | undefined> {
    const opened = await file.dir.openFile(file.name);
    if (!opened) return undefined;
    try {
      // Not the size checked against the allowance: changed since it was listed; the next call records the settled file.
      if (opened.stats.size !== file.size) return undefined;
      const modifiedAt = opened.stats.mtime.toISOString();
      const sha256 = await sha256Of(opened, file.size);
      if (before?.sha256 === sha256) return { sha256, objectKey: before.objectKey, size: before.size, modifiedAt };
      const objectKey = `artifacts/${taskId}/${sha256}`;
      if (!allowance.fits(objectKey, file.size)) return OVER_QUOTA;
      // Already in the store: a removed artifact put back (held, so free), or a copy kept by a call
      // whose result was never recorded (counted now, as its record will be).
      const existing = await this.objects.stat(objectKey);
      if (existing) {
        allowance.take(objectKey, existing.size);
        return { sha256, objectKey, size: existing.size, modifiedAt };
      }
      const put = await this.objects.put(objectKey, firstBytes(opened, file.size));
      if (put.sha256 === sha256) {
        allowance.take(objectKey, put.size);
        return { sha256, objectKey, size: put.size, modifiedAt };
      }
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
        out.set(recorded, {
          dir,
          entry,
          name: entry.name,
          path: recorded,
          size: entry.stats.size,
          modifiedAt: entry.stats.mtime.toISOString(),
        });
      } else {
        notes.add(entry, `${path} is ${describe(entry.kind, entry.special)}: not recorded`);
        if (entry.kind === 'symlink') links.consider(path, await dir.readLink(entry.name).catch(() => ''));
      }
    }
  }
}

async function sha256Of(file: OpenedFile, size: number): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of firstBytes(file, size)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The file's first `size` bytes, the size checked against the allowance, however long the file grows meanwhile. */
function firstBytes(file: OpenedFile, size: number): Readable {
  // `end` is inclusive, and a stream cannot end before byte 0.
  return size === 0 ? Readable.from([]) : file.handle.createReadStream({ start: 0, end: size - 1, autoClose: false });
}

function overQuotaNote(file: FoundFile, allowance: ArtifactAllowance): string {
  return (
    `${file.path} (${file.size} bytes) is not stored: the task's artifacts would pass ` +
    `SANDBOX_DISK_QUOTA_BYTES (${allowance.quotaBytes} bytes, ${allowance.leftBytes} left)`
  );
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
