import type { Readable } from 'node:stream';
import { NotFoundError } from '@app/common';
import type { ObjectStore } from '@app/object-store';
import type { CheckpointFile, PieceLocation, TreeEntry } from '@app/task-domain';
import { compareNames, decodeNode } from './tree-node';

/** Decoded folders kept per reader: nodes never change, so a hit is always right. */
const DEFAULT_CACHED_FOLDERS = 512;

/** An entry met by a walk, with its workspace-relative path. */
export interface WalkedEntry {
  readonly path: string;
  readonly entry: TreeEntry;
}

/** A page of a checkpoint's files. */
export interface FilesPage {
  readonly files: CheckpointFile[];
  /** The last path of this page when more follow: pass it back as `after`. */
  readonly next?: string;
}

/**
 * Reads a checkpoint's tree from the object store: its folders, its files page by page, one
 * file's bytes, or everything in order for a restore. The order is folder by folder, names in
 * byte order, each folder before what it holds (what `tar` needs, and what a cursor can resume).
 */
export class CheckpointReader {
  private readonly folders = new Map<string, readonly TreeEntry[]>();

  constructor(
    private readonly objects: ObjectStore,
    private readonly cachedFolders = DEFAULT_CACHED_FOLDERS,
  ) {}

  /** The entries of the folder stored at `at`, in byte order of names. */
  async folder(at: PieceLocation): Promise<readonly TreeEntry[]> {
    // By where it is stored: two copies of one folder name different pieces (see objectKeys).
    const stored = `${at.key}@${at.offset}`;
    const cached = this.folders.get(stored);
    if (cached) return cached;
    const entries = await this.entriesOfNode(at);
    this.folders.set(stored, entries);
    // Oldest first out: a Map keeps insertion order.
    if (this.folders.size > this.cachedFolders) this.folders.delete(this.folders.keys().next().value as string);
    return entries;
  }

  /** Every entry below `root`, each folder before what it holds; after `after` only when given (a path from a previous walk). */
  async *walk(root: TreeEntry, after?: string): AsyncGenerator<WalkedEntry> {
    yield* this.walkFolder(root, '', after === undefined ? undefined : after.split('/'));
  }

  /** Up to `limit` files after `after`, in walk order. */
  async files(root: TreeEntry, limit: number, after?: string): Promise<FilesPage> {
    const files: CheckpointFile[] = [];
    for await (const { path, entry } of this.walk(root, after)) {
      if (entry.kind !== 'file') continue;
      if (files.length === limit) return { files, next: files[files.length - 1].path };
      files.push({ path, size: entry.size, sha256: entry.sha256 });
    }
    return { files };
  }

  /** The entry at `path` (workspace-relative), or undefined; no link is followed on the way. */
  async find(root: TreeEntry, path: string): Promise<TreeEntry | undefined> {
    let current: TreeEntry | undefined = root;
    for (const name of path.split('/')) {
      if (current?.kind !== 'dir' || !current.at || name === '' || name === '.' || name === '..') return undefined;
      current = (await this.folder(current.at)).find((e) => e.name === name);
    }
    return current;
  }

  /**
   * Every object a checkpoint's tree has a piece in (its packs and big files), folder nodes and a
   * big folder's inner trie nodes included: what garbage collection must keep for it. Adds to `into`.
   */
  async objectKeys(root: TreeEntry, into = new Set<string>(), seenFolders = new Set<string>()): Promise<Set<string>> {
    // A stored folder node met before (in this tree or another checkpoint's) holds nothing new:
    // checkpoints share most of their folders, so each is read once per collection, not once per
    // checkpoint. By where it is stored, not by its hash: the same folder stored twice names
    // different pieces, and both must be kept.
    const stored = root.at && `${root.at.key}@${root.at.offset}`;
    if (!stored || seenFolders.has(stored)) return into;
    seenFolders.add(stored);
    await this.nodeKeys(root.at, into);
    for (const entry of await this.folder(root.at)) {
      if (entry.kind === 'dir') await this.objectKeys(entry, into, seenFolders);
      else if (entry.at) into.add(entry.at.key);
    }
    return into;
  }

  /**
   * The inner trie nodes of a big folder stored at `at` (none for a folder of one leaf), with
   * their hashes: what a writer reuses instead of storing them again.
   */
  async trieNodes(at: PieceLocation): Promise<{ sha256: string; at: PieceLocation }[]> {
    const node = decodeNode(await this.piece(at));
    if (node.kind === 'leaf') return [];
    const below = await Promise.all(node.buckets.map((b) => this.trieNodes(b.at)));
    return [...node.buckets.map((b) => ({ sha256: b.sha256, at: b.at })), ...below.flat()];
  }

  /** A file's bytes, streamed from its pack. */
  open(entry: TreeEntry): Promise<Readable> {
    if (entry.kind !== 'file' || !entry.at) throw new NotFoundError('file');
    return this.objects.get(entry.at.key, { offset: entry.at.offset, length: entry.at.length });
  }

  private async *walkFolder(folder: TreeEntry, prefix: string, after: string[] | undefined): AsyncGenerator<WalkedEntry> {
    if (!folder.at) return;
    for (const entry of await this.folder(folder.at)) {
      const order = after ? compareNames(entry.name, after[0]) : 1;
      if (order < 0) continue;
      const path = `${prefix}${entry.name}`;
      // The cursor's own entry was given already; what is below it may not have been.
      if (order > 0) yield { path, entry };
      if (entry.kind === 'dir') yield* this.walkFolder(entry, `${path}/`, order === 0 && after!.length > 1 ? after!.slice(1) : undefined);
    }
  }

  private async nodeKeys(at: PieceLocation, into: Set<string>): Promise<void> {
    into.add(at.key);
    const node = decodeNode(await this.piece(at));
    if (node.kind === 'buckets') for (const bucket of node.buckets) await this.nodeKeys(bucket.at, into);
  }

  private async entriesOfNode(at: PieceLocation): Promise<TreeEntry[]> {
    const node = decodeNode(await this.piece(at));
    if (node.kind === 'leaf') return [...node.entries];
    const parts = await Promise.all(node.buckets.map((b) => this.entriesOfNode(b.at)));
    return parts.flat().sort((a, b) => compareNames(a.name, b.name));
  }

  private async piece(at: PieceLocation): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.objects.get(at.key, { offset: at.offset, length: at.length })) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
}
