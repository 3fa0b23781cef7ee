import type { BigIntStats } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import type { CheckpointRef, PieceLocation, TreeEntry, WorkspaceChange } from '@app/task-domain';
import type { EncodedNode, EncodedTrie } from '@app/checkpoints';
import { PackBuilder, encodeFolder } from '@app/checkpoints';
import type { ObjectStore } from '@app/object-store';
import type { OnSkipped } from '../snapshot-entries';
import { SNAPSHOT_MAX_DEPTH } from '../snapshot-entries';
import type { Baseline, KnownFile } from './baseline';
import type { Hints } from './change-hints';
import type { FolderScope } from './hinted-scope';
import { HintedScope } from './hinted-scope';
import { MapJournal } from './map-journal';
import type { SyncEntry } from './sync-no-follow-dir';
import { SyncNoFollowDir } from './sync-no-follow-dir';

/** A big file with less than 1/SPARSE_RATIO of its apparent size allocated is sparse: see bigFile. */
const SPARSE_RATIO = 8n;
/** A file bigger than this is an object of its own, streamed: a pack is held in memory until put. */
export const OWN_OBJECT_BYTES = 8 * 1024 ** 2;
/** Entries one checkpoint lists at most (files, folders and links). */
export const MAX_WALK_ENTRIES = 500_000;
/** Changes listed on a tool_result at most (docs/api.md "Time travel"); past it `changesTruncated`. */
export const MAX_CHANGES = 1000;
/** And at most this many bytes of paths: a path may be 4 KiB, and the list rides in one bus message and one event. */
export const MAX_CHANGES_PATH_BYTES = 256 * 1024;
// A file written within this long before the walk could change again within the same clock
// tick and keep its times: it is read again next time (git's "racy clean" rule).
const RACY_NS = 20_000_000n;

export interface CheckpointTarget {
  readonly taskId: string;
  readonly lineage: string;
  readonly seq: number;
  /** Bytes one checkpoint may add; past it nothing is stored and CheckpointTooLargeError says so. */
  readonly maxAddedBytes: number;
  readonly onSkipped?: OnSkipped;
  /**
   * The folders touched since `previous` was taken (change-hints.ts): only those are re-listed,
   * the rest is carried over. Absent: the whole workspace is walked.
   */
  readonly hints?: Hints;
}

export interface WrittenCheckpoint {
  readonly ref: CheckpointRef;
  readonly changes: WorkspaceChange[];
  readonly changesTruncated: boolean;
  /** Pack objects this checkpoint put (to remove should it not be recorded). */
  readonly packs: readonly string[];
  /** What the next checkpoint compares against. */
  readonly baseline: Baseline;
}

export class CheckpointTooLargeError extends Error {}

/** A file with several links: a change through one name touches folders the others are in, unseen (hinted walks give up). */
class HardLinkMet extends Error {}

/**
 * Walks the workspace once (no link followed: sync-no-follow-dir.ts), reads only the files whose
 * inode, size or times moved since `previous`, and stores what is new: their contents (each
 * distinct content once per lineage) and the folder nodes on their paths, in one pack where it
 * fits. Returns the new tree's root and what changed.
 * With `target.hints`, only the touched folders are walked and the rest is taken from
 * `previous` as it was; the changes are the same a whole walk finds (checkpoint-hints.int-spec.ts).
 */
export async function writeCheckpoint(
  objects: ObjectStore,
  workspaceRoot: string,
  previous: Baseline | undefined,
  target: CheckpointTarget,
): Promise<WrittenCheckpoint> {
  // A baseline read from the store, or one that saw hard links, cannot carry untouched folders over.
  if (target.hints && previous?.listings && previous.hardLinks === false) {
    try {
      return await writeOnce(objects, workspaceRoot, previous, target, new HintedScope(target.hints));
    } catch (error) {
      if (!(error instanceof HardLinkMet)) throw error;
    }
  }
  return writeOnce(objects, workspaceRoot, previous, target, undefined);
}

async function writeOnce(
  objects: ObjectStore,
  workspaceRoot: string,
  previous: Baseline | undefined,
  target: CheckpointTarget,
  scope: HintedScope | undefined,
): Promise<WrittenCheckpoint> {
  // Every key says when it was written: garbage collection spares what is younger than its grace
  // time (a checkpoint stored, its event not yet appended).
  const suffix = `${Date.now()}-${randomBytes(4).toString('hex')}`;
  const prefix = `checkpoints/${target.lineage}`;
  const pack = new PackBuilder(objects, (n) => `${prefix}/${target.taskId}/${target.seq}-${suffix}-${n}.pack`);
  const walk = new CheckpointWalk(objects, pack, previous, target, `${prefix}/blobs`, scope);
  try {
    const root = await walk.folder(SyncNoFollowDir.open(workspaceRoot), '', 1, 0o755, scope ? 'hinted' : 'whole');
    const rootEntry = walk.stored(root);
    walk.carryOver();
    const packs = await pack.finish();
    const changes = walk.changes();
    const listed = listedChanges(changes);
    return {
      ref: {
        seq: target.seq,
        lineage: target.lineage,
        root: { sha256: rootEntry.sha256, at: rootEntry.at! },
        files: walk.fileCount,
        addedBytes: pack.bytes + walk.ownObjectBytes,
      },
      changes: listed,
      changesTruncated: listed.length < changes.length,
      packs,
      baseline: walk.baseline(rootEntry),
    };
  } catch (error) {
    walk.undo();
    await pack.discard();
    throw error;
  }
}

interface WalkedFolder {
  readonly entries: TreeEntry[];
  /** Every entry as it was in `previous`: the stored node is reused as it is. */
  readonly unchanged: boolean;
  readonly path: string;
  readonly mode: number;
}

/**
 * One checkpoint's walk: what it found, read and stored. A hinted one (`scope`) takes over the
 * previous baseline's maps and edits them in place, through a journal (undone if it fails): it
 * walks only what the hints name and forgets what is gone from the folders it listed; the
 * folders it did not walk keep their entries. `previous` is then the new baseline's, not its own.
 */
class CheckpointWalk {
  readonly files: Map<string, KnownFile>;
  readonly folders: Map<string, TreeEntry>;
  readonly folderSizes: Map<string, number>;
  readonly listings: Map<string, readonly TreeEntry[]>;
  readonly tries: Map<string, EncodedTrie>;
  readonly nodes: Map<string, PieceLocation>;
  readonly innerNodes: Map<string, readonly string[]>;
  readonly nodeRefs: Map<string, number>;
  readonly contents: Map<string, PieceLocation>;
  fileCount = 0;
  ownObjectBytes = 0;
  private hardLinks = false;
  /** Hinted: the files this walk looked at, those it found gone, and the folders it listed. */
  private readonly seen = new Set<string>();
  private readonly gone = new Set<string>();
  private readonly listed = new Set<string>();
  private readonly startedNs = BigInt(Date.now()) * 1_000_000n;
  private readonly journal?: MapJournal;

  constructor(
    private readonly objects: ObjectStore,
    private readonly pack: PackBuilder,
    private readonly previous: Baseline | undefined,
    private readonly target: CheckpointTarget,
    private readonly blobPrefix: string,
    private readonly scope: HintedScope | undefined,
  ) {
    if (scope && previous?.listings && previous.nodeRefs) {
      // Maps at run time (made by a walk): read-only to everyone but the checkpoint taking them over.
      this.journal = new MapJournal();
      this.files = previous.files as Map<string, KnownFile>;
      this.folders = previous.folders as Map<string, TreeEntry>;
      this.folderSizes = previous.folderSizes as Map<string, number>;
      this.listings = previous.listings as Map<string, readonly TreeEntry[]>;
      this.tries = (previous.tries ?? new Map()) as Map<string, EncodedTrie>;
      this.nodes = previous.nodes as Map<string, PieceLocation>;
      this.innerNodes = previous.innerNodes as Map<string, readonly string[]>;
      this.nodeRefs = previous.nodeRefs as Map<string, number>;
      this.contents = previous.contents as Map<string, PieceLocation>;
      this.fileCount = previous.fileCount ?? 0;
      return;
    }
    this.files = new Map();
    this.folders = new Map();
    this.folderSizes = new Map();
    this.listings = new Map();
    this.tries = new Map();
    this.nodes = new Map();
    this.innerNodes = new Map();
    this.nodeRefs = new Map();
    this.contents = new Map(previous?.contents);
  }

  /** A hinted walk failed: the baseline it took over is as it was. */
  undo(): void {
    this.journal?.undo();
  }

  private entriesListed = 0;

  async folder(dir: SyncNoFollowDir, path: string, depth: number, mode: number, scope: FolderScope): Promise<WalkedFolder> {
    try {
      const entries: TreeEntry[] = [];
      let unchanged = this.previous?.folderSizes.get(path) !== undefined;
      let count = 0;
      const names = scope === 'hinted' ? this.scope?.namesIn(path) : undefined;
      for (const found of names ? this.partialList(dir, path, names) : dir.list()) {
        // A workspace of millions of names (a folder workspace has no inode bound) would hold the
        // service's memory and the step's time: past the bound the step goes on unrecorded.
        if (++this.entriesListed > MAX_WALK_ENTRIES) {
          throw new CheckpointTooLargeError(`the workspace holds more than ${MAX_WALK_ENTRIES} entries: it is not checkpointed`);
        }
        if ('reused' in found) {
          count++;
          entries.push(found.reused);
          continue;
        }
        const childPath = path === '' ? found.name : `${path}/${found.name}`;
        if (found.kind === 'special') {
          this.target.onSkipped?.(childPath, found.why);
          continue;
        }
        const entry = await this.entry(dir, found.name, found.kind, found.stats, childPath, depth, scope);
        if (!entry) continue;
        count++;
        entries.push(entry.entry);
        unchanged &&= entry.unchanged;
      }
      unchanged &&= this.previous?.folderSizes.get(path) === count;
      if (this.scope) this.forgetGone(path, entries);
      return { entries, unchanged, path, mode };
    } finally {
      dir.close();
    }
  }

  /** The folder's entry in its parent: its node reused when nothing in it changed, else encoded and stored. */
  stored(folder: WalkedFolder): TreeEntry {
    const before = this.previous?.folders.get(folder.path);
    const encodedBefore = this.previous?.tries?.get(folder.path);
    let entry: TreeEntry;
    if (folder.unchanged && before) {
      entry = { ...before, mode: folder.mode };
      // Taken over (hinted), the maps already name its nodes.
      if (!this.journal) this.reference(before, this.previous?.innerNodes.get(before.sha256));
      if (encodedBefore) this.put(this.tries, folder.path, encodedBefore);
    } else {
      const inner: string[] = [];
      const node = encodeFolder(
        folder.entries,
        (child) => {
          inner.push(child.sha256);
          return this.storeNode(child);
        },
        encodedBefore,
      );
      this.put(this.tries, folder.path, node.trie);
      const at = this.storeNode(node);
      entry = { name: '', kind: 'dir', mode: folder.mode, size: 0, mtimeMs: 0, sha256: node.sha256, at };
      if (this.journal && before) this.rereference(before, entry, inner);
      else this.reference(entry, inner);
    }
    this.put(this.folders, folder.path, entry);
    this.put(this.folderSizes, folder.path, folder.entries.length);
    this.put(this.listings, folder.path, folder.entries);
    this.listed.add(folder.path);
    return entry;
  }

  /**
   * Hinted: the file count is counted on what the tree now holds (the folders not walked keep
   * their entries and nodes in the maps taken over).
   */
  carryOver(): void {
    if (!this.scope) return;
    const journal = this.journal!;
    for (const path of journal.changed(this.files)) {
      if (journal.before(this.files, path)?.entry.kind === 'file') this.fileCount--;
      if (this.files.get(path)?.entry.kind === 'file') this.fileCount++;
    }
  }

  changes(): WorkspaceChange[] {
    const changes: WorkspaceChange[] = [];
    // A hinted walk compares what it looked at; the rest is as it was.
    const beforeOf = (path: string) => (this.journal ? this.journal.before(this.files, path) : this.previous?.files.get(path));
    for (const path of this.scope ? this.seen : this.files.keys()) {
      const now = this.files.get(path);
      const before = beforeOf(path);
      if (!now) continue;
      if (!before) changes.push({ path, change: 'created', size: now.entry.size });
      else if (!sameContent(before.entry, now.entry)) changes.push({ path, change: 'modified', size: now.entry.size });
    }
    for (const path of this.scope ? this.gone : (this.previous?.files.keys() ?? [])) {
      const before = beforeOf(path);
      if (before && !this.files.has(path)) changes.push({ path, change: 'deleted', size: before.entry.size });
    }
    return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  baseline(root: TreeEntry): Baseline {
    return {
      root,
      files: this.files,
      folders: this.folders,
      folderSizes: this.folderSizes,
      nodes: this.nodes,
      innerNodes: this.innerNodes,
      nodeRefs: this.nodeRefs,
      contents: this.contents,
      listings: this.listings,
      tries: this.tries,
      hardLinks: this.hardLinks,
      fileCount: this.fileCount,
    };
  }

  private async entry(
    dir: SyncNoFollowDir,
    name: string,
    kind: 'file' | 'dir' | 'symlink',
    stats: BigIntStats,
    path: string,
    depth: number,
    scope: FolderScope,
  ): Promise<{ entry: TreeEntry; unchanged: boolean } | undefined> {
    const mode = Number(stats.mode) & 0o7777;
    if (kind === 'dir') {
      if (depth > SNAPSHOT_MAX_DEPTH) {
        this.target.onSkipped?.(path, `a folder more than ${SNAPSHOT_MAX_DEPTH} levels deep`);
        return undefined;
      }
      const before = this.previous?.folders.get(path);
      const inner = scope === 'whole' || !this.scope ? 'whole' : this.scope.of(path, before !== undefined);
      if (inner === 'reuse' && before) {
        // Untouched since `previous`: its entry as it was (its mode is its parent's to say).
        const entry = { ...before, mode };
        this.put(this.folders, path, entry);
        return { entry: { ...entry, name }, unchanged: before.mode === mode };
      }
      const sub = dir.openDir(name, stats);
      if (!sub) return undefined;
      const folder = await this.folder(sub, path, depth + 1, mode, inner);
      const entry = { ...this.stored(folder), name };
      return { entry, unchanged: folder.unchanged && before?.mode === mode };
    }
    if (kind === 'file' && stats.nlink > 1n) {
      if (this.scope) throw new HardLinkMet(path);
      this.hardLinks = true;
    }
    const known = this.previous?.files.get(path);
    const entry = kind === 'symlink' ? this.link(dir, name, stats, mode) : await this.file(dir, name, stats, mode, known);
    if (!entry) return undefined;
    this.put(this.files, path, { entry, stat: statKey(stats), racy: this.startedNs - stats.mtimeNs < RACY_NS });
    if (this.scope) this.seen.add(path);
    else if (kind === 'file') this.fileCount++;
    return { entry, unchanged: known !== undefined && sameEntry(known.entry, entry) };
  }

  /**
   * Hinted, a folder whose changed entries are known by name: those, and the folders to pass
   * through, are looked at again; every other entry is its previous one, as it was (its file, or
   * its folder's whole subtree). The folder is not listed: the detector names every entry made,
   * removed, renamed or written (a name it could not tell has its folder re-listed whole).
   */
  private partialList(dir: SyncNoFollowDir, path: string, names: ReadonlySet<string>): (SyncEntry | { reused: TreeEntry })[] {
    const found: (SyncEntry | { reused: TreeEntry })[] = [];
    const look = (name: string) => {
      const entry = dir.entry(name);
      if (entry) found.push(entry);
    };
    for (const old of this.previous?.listings?.get(path) ?? []) {
      const passedThrough = old.kind === 'dir' && this.scope?.of(childOf(path, old.name), true) !== 'reuse';
      if (passedThrough && !names.has(old.name)) look(old.name);
      else if (!names.has(old.name)) found.push({ reused: old });
    }
    for (const name of names) look(name);
    return found;
  }

  /** Hinted: what `path` held in `previous` and no longer does (gone, or a folder now a file or the reverse) is forgotten. */
  private forgetGone(path: string, entries: readonly TreeEntry[]): void {
    const before = this.previous?.listings?.get(path);
    if (!before) return;
    const now = new Map(entries.map((entry) => [entry.name, entry.kind]));
    for (const old of before) {
      const kind = now.get(old.name);
      const at = childOf(path, old.name);
      if (old.kind === 'dir' && kind !== 'dir') this.forgetFolder(at);
      else if (old.kind !== 'dir' && (kind === undefined || kind === 'dir')) this.forgetFile(at);
    }
  }

  private forgetFolder(path: string): void {
    for (const old of this.previous?.listings?.get(path) ?? []) {
      const at = childOf(path, old.name);
      if (old.kind === 'dir') this.forgetFolder(at);
      else this.forgetFile(at);
    }
    const folder = this.folders.get(path);
    if (folder) this.unreference(folder);
    this.remove(this.folders, path);
    this.remove(this.folderSizes, path);
    this.remove(this.listings, path);
    this.remove(this.tries, path);
  }

  private forgetFile(path: string): void {
    this.remove(this.files, path);
    this.gone.add(path);
  }

  private put<K, V>(map: Map<K, V>, key: K, value: V): void {
    if (this.journal) this.journal.set(map, key, value);
    else map.set(key, value);
  }

  private remove<K, V>(map: Map<K, V>, key: K): void {
    if (this.journal) this.journal.delete(map, key);
    else map.delete(key);
  }

  private link(dir: SyncNoFollowDir, name: string, stats: BigIntStats, mode: number): TreeEntry | undefined {
    const target = dir.readLink(name);
    if (target === undefined) return undefined;
    const sha256 = createHash('sha256').update(target).digest('hex');
    return { name, kind: 'symlink', mode, size: 0, mtimeMs: msOf(stats), sha256, target };
  }

  private async file(
    dir: SyncNoFollowDir,
    name: string,
    stats: BigIntStats,
    mode: number,
    known: KnownFile | undefined,
  ): Promise<TreeEntry | undefined> {
    const base = { name, kind: 'file' as const, mode, size: Number(stats.size), mtimeMs: msOf(stats) };
    if (known?.stat === statKey(stats) && !known.racy && known.entry.kind === 'file') return { ...known.entry, ...base };
    if (stats.size > BigInt(OWN_OBJECT_BYTES)) return this.bigFile(dir, name, stats, base);
    const chunks: Buffer[] = [];
    const hash = createHash('sha256');
    const read = dir.readFile(name, stats, (chunk) => {
      hash.update(chunk);
      chunks.push(chunk);
    });
    if (!read) return undefined;
    const sha256 = hash.digest('hex');
    let at = this.contents.get(sha256);
    if (!at) {
      this.assertRoom(base.size);
      at = this.pack.add(Buffer.concat(chunks));
      this.put(this.contents, sha256, at);
      await this.pack.putIfFull();
    }
    return { ...base, sha256, at };
  }

  /** Hashed first (read once), then streamed into an object named by its hash, unless the lineage has it. */
  private async bigFile(
    dir: SyncNoFollowDir,
    name: string,
    stats: BigIntStats,
    base: Omit<TreeEntry, 'sha256'>,
  ): Promise<TreeEntry | undefined> {
    // A checkpoint stores whole contents: a sparse file of a few KB and 1,000 MB apparent would be
    // read and stored as 1,000 MB of zeros (Node cannot seek past holes). The step goes on
    // unrecorded, saying why; the idle snapshot (tar --sparse) still keeps such files as holes.
    if (stats.blocks * 512n * SPARSE_RATIO < stats.size) {
      throw new CheckpointTooLargeError(
        `${name} is a sparse file (${stats.size} bytes, ${stats.blocks * 512n} allocated): checkpoints store whole contents, so this step is not checkpointed`,
      );
    }
    // Before reading it: its bytes are stored unless another copy already is, and reading 1 GB costs seconds.
    this.assertRoom(base.size);
    const hash = createHash('sha256');
    if (!dir.readFile(name, stats, (chunk) => hash.update(chunk))) return undefined;
    const sha256 = hash.digest('hex');
    let at = this.contents.get(sha256);
    if (!at) {
      this.assertRoom(base.size);
      const handle = await dir.openFile(name, stats);
      if (!handle) return undefined;
      const key = `${this.blobPrefix}/${sha256}-${Date.now()}`;
      try {
        const put = await this.objects.put(key, handle.createReadStream({ start: 0, end: base.size - 1, autoClose: false }));
        // Changed between the two reads: nothing may name content it does not hold.
        if (put.sha256 !== sha256) throw new Error(`${name} changed while it was checkpointed`);
      } finally {
        await handle.close();
      }
      at = { key, offset: 0, length: base.size };
      this.put(this.contents, sha256, at);
      this.ownObjectBytes += base.size;
    }
    return { ...base, sha256, at };
  }

  /** Stored unless known: its bytes (compressed on first use) are asked for only then. */
  private storeNode(node: EncodedNode): PieceLocation {
    const known = this.nodes.get(node.sha256) ?? this.previous?.nodes.get(node.sha256);
    if (known) return known;
    const at = this.pack.add(node.bytes);
    this.put(this.nodes, node.sha256, at);
    return at;
  }

  /**
   * The tree names `folder`'s node and its trie's inner nodes once more. The baseline's `nodes`
   * holds exactly the nodes its tree names (a later checkpoint reuses their locations, and a node
   * no kept checkpoint names may be collected): a hinted walk keeps it so by counting, without
   * going over the folders it did not touch.
   */
  private reference(folder: TreeEntry, inner: readonly string[] | undefined): void {
    if (this.addRef(folder.sha256, folder.at) && inner?.length) this.put(this.innerNodes, folder.sha256, inner);
    for (const sha of inner ?? []) this.addRef(sha, undefined);
  }

  private unreference(folder: TreeEntry): void {
    const inner = this.innerNodes.get(folder.sha256);
    if (this.dropRef(folder.sha256)) this.remove(this.innerNodes, folder.sha256);
    for (const sha of inner ?? []) this.dropRef(sha);
  }

  /**
   * A folder whose node changed from `before`'s to `after`'s: only the inner nodes one names and
   * the other does not are counted again (one changed name of a big folder changes one leaf of
   * its trie). The new node is named before the old one lets go, so a node both hold stays.
   */
  private rereference(before: TreeEntry, after: TreeEntry, inner: readonly string[]): void {
    const oldInner = this.innerNodes.get(before.sha256) ?? [];
    const [kept, had] = [new Set(inner), new Set(oldInner)];
    if (this.addRef(after.sha256, after.at) && inner.length) this.put(this.innerNodes, after.sha256, inner);
    for (const sha of inner) if (!had.has(sha)) this.addRef(sha, undefined);
    if (this.dropRef(before.sha256)) this.remove(this.innerNodes, before.sha256);
    for (const sha of oldInner) if (!kept.has(sha)) this.dropRef(sha);
  }

  /** True when the node was not named before. */
  private addRef(sha: string, at: PieceLocation | undefined): boolean {
    const count = this.nodeRefs.get(sha) ?? 0;
    this.put(this.nodeRefs, sha, count + 1);
    if (count > 0) return false;
    const location = at ?? this.nodes.get(sha) ?? this.previous?.nodes.get(sha);
    if (location && !this.nodes.has(sha)) this.put(this.nodes, sha, location);
    return true;
  }

  /** True when the node is no longer named. */
  private dropRef(sha: string): boolean {
    const count = this.nodeRefs.get(sha) ?? 0;
    if (count > 1) {
      this.put(this.nodeRefs, sha, count - 1);
      return false;
    }
    this.remove(this.nodeRefs, sha);
    this.remove(this.nodes, sha);
    return true;
  }

  private assertRoom(bytes: number): void {
    if (this.pack.bytes + this.ownObjectBytes + bytes > this.target.maxAddedBytes) {
      throw new CheckpointTooLargeError(
        `the step's changes pass the ${this.target.maxAddedBytes} bytes one checkpoint may store (SANDBOX_SNAPSHOT_MAX_BYTES)`,
      );
    }
  }
}

/** The first changes, by path, within MAX_CHANGES and MAX_CHANGES_PATH_BYTES. */
function listedChanges(changes: readonly WorkspaceChange[]): WorkspaceChange[] {
  const listed: WorkspaceChange[] = [];
  let bytes = 0;
  for (const change of changes) {
    bytes += Buffer.byteLength(change.path);
    if (listed.length === MAX_CHANGES || bytes > MAX_CHANGES_PATH_BYTES) break;
    listed.push(change);
  }
  return listed;
}

function childOf(path: string, name: string): string {
  return path === '' ? name : `${path}/${name}`;
}

function statKey(stats: BigIntStats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

function msOf(stats: BigIntStats): number {
  return Number(stats.mtimeNs / 1_000_000n);
}

function sameContent(a: TreeEntry, b: TreeEntry): boolean {
  return a.kind === b.kind && a.sha256 === b.sha256 && a.mode === b.mode;
}

function sameEntry(a: TreeEntry, b: TreeEntry): boolean {
  return sameContent(a, b) && a.size === b.size && a.mtimeMs === b.mtimeMs && a.at?.key === b.at?.key && a.at?.offset === b.at?.offset;
}
