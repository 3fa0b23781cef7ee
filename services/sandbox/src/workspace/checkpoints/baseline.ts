import type { CheckpointReader, EncodedTrie } from '@app/checkpoints';
import type { CheckpointRef, PieceLocation, TreeEntry } from '@app/task-domain';

/** A file or link of the last checkpoint, with how it looked on disk when it was read. */
export interface KnownFile {
  readonly entry: TreeEntry;
  /** inode, size and times then; absent when the tree was loaded from the store (the file is read again). */
  readonly stat?: string;
  /** Written just before that walk: read again next time, whatever its times say. */
  readonly racy?: boolean;
}

/**
 * What the next checkpoint compares the workspace against: the last one's tree by path, and
 * where its contents and nodes are stored (so an unchanged one is never stored twice).
 */
export interface Baseline {
  readonly root: TreeEntry;
  readonly files: ReadonlyMap<string, KnownFile>;
  /** Each folder's own entry by path ('' the top). */
  readonly folders: ReadonlyMap<string, TreeEntry>;
  readonly folderSizes: ReadonlyMap<string, number>;
  /** Every stored node of the tree by hash. */
  readonly nodes: ReadonlyMap<string, PieceLocation>;
  /** A big folder's trie nodes below its top node, by the top node's hash. */
  readonly innerNodes: ReadonlyMap<string, readonly string[]>;
  /** How many times the tree names each node (absent: from the store), so a hinted walk keeps `nodes` exact. */
  readonly nodeRefs?: ReadonlyMap<string, number>;
  /** Every content of the tree by hash. */
  readonly contents: ReadonlyMap<string, PieceLocation>;
  /**
   * Each folder's entries by the folder's path, and whether any file had more than one link:
   * what a checkpoint told which folders changed (change-hints.ts) needs to carry the rest over.
   * Absent when loaded from the store: such a baseline is compared by a walk of everything.
   */
  readonly listings?: ReadonlyMap<string, readonly TreeEntry[]>;
  /** Each folder's node as last encoded, so the next encoding re-encodes only the leaves that changed (absent: from the store). */
  readonly tries?: ReadonlyMap<string, EncodedTrie>;
  readonly hardLinks?: boolean;
  /** Regular files in the tree (its CheckpointRef's `files`). */
  readonly fileCount?: number;
}

/**
 * The baseline of a recorded checkpoint, read from the store: after a restart, on another
 * instance, or after a fork. Files carry no disk state, so the next checkpoint reads each once.
 */
export async function baselineOf(reader: CheckpointReader, ref: CheckpointRef): Promise<Baseline> {
  const root: TreeEntry = { name: '', kind: 'dir', mode: 0o755, size: 0, mtimeMs: 0, sha256: ref.root.sha256, at: ref.root.at };
  const files = new Map<string, KnownFile>();
  const folders = new Map<string, TreeEntry>([['', root]]);
  const folderSizes = new Map<string, number>();
  const nodes = new Map<string, PieceLocation>([[root.sha256, ref.root.at]]);
  const contents = new Map<string, PieceLocation>();
  const innerNodes = new Map<string, readonly string[]>();
  // A big folder's trie nodes are known too, so an unchanged one is not stored again.
  const learnTrie = async (folder: TreeEntry) => {
    if (!folder.at) return;
    const trie = await reader.trieNodes(folder.at);
    if (trie.length === 0) return;
    for (const node of trie) nodes.set(node.sha256, node.at);
    innerNodes.set(
      folder.sha256,
      trie.map((node) => node.sha256),
    );
  };
  await learnTrie(root);
  for await (const { path, entry } of reader.walk(root)) {
    const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    folderSizes.set(parent, (folderSizes.get(parent) ?? 0) + 1);
    if (entry.kind === 'dir') {
      folders.set(path, { ...entry, name: '' });
      folderSizes.set(path, folderSizes.get(path) ?? 0);
      if (entry.at) nodes.set(entry.sha256, entry.at);
      await learnTrie(entry);
      continue;
    }
    files.set(path, { entry });
    if (entry.kind === 'file' && entry.at) contents.set(entry.sha256, entry.at);
  }
  folderSizes.set('', folderSizes.get('') ?? 0);
  return { root, files, folders, folderSizes, nodes, innerNodes, contents };
}
