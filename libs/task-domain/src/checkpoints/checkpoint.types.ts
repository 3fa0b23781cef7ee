/**
 * Workspace checkpoints (docs/design/workspace-checkpoints.md): after each tool call that changed
 * the workspace, what changed is stored content-addressed in the object store, in one pack object
 * per checkpoint, and a Merkle tree of directory nodes names every file of the workspace then.
 * A checkpoint's root node is what an event refers to; every unchanged file and folder is shared
 * with the checkpoint before it.
 */

/** A stored piece (a file's content or a tree node): a byte range of one object. */
export interface PieceLocation {
  readonly key: string;
  readonly offset: number;
  readonly length: number;
}

export type EntryKind = 'file' | 'dir' | 'symlink';

/** One name in a directory node. */
export interface TreeEntry {
  readonly name: string;
  readonly kind: EntryKind;
  /** Permission bits (0o7777 at most). */
  readonly mode: number;
  /** A file's size in bytes; 0 for folders and links. */
  readonly size: number;
  readonly mtimeMs: number;
  /** A file's content hash (hex); a folder's node hash; a link's target hash. */
  readonly sha256: string;
  /** A file's content or a folder's node; absent for links. */
  readonly at?: PieceLocation;
  /** A link's target, kept as written (never followed). */
  readonly target?: string;
}

/** What a tool_result reports of the step that changed the workspace (docs/api.md "Time travel"). */
export interface WorkspaceChange {
  readonly path: string;
  readonly change: 'created' | 'modified' | 'deleted';
  readonly size: number;
}

/** A file as listed "as of an event". */
export interface CheckpointFile {
  readonly path: string;
  readonly size: number;
  readonly sha256: string;
}

/**
 * What an event keeps of a checkpoint (on the ToolCallFinished of its step; never shown to
 * callers): enough to read the tree and to keep writing the same lineage.
 */
export interface CheckpointRef {
  /** 1, 2, … per task; a fork goes on from its source's number. */
  readonly seq: number;
  /** The task at the root of the fork tree: every checkpoint of a tree is stored under it. */
  readonly lineage: string;
  /** The workspace's top folder. */
  readonly root: { readonly sha256: string; readonly at: PieceLocation };
  /** Files in the workspace then. */
  readonly files: number;
  /** Bytes this checkpoint stored (new contents and folder nodes). */
  readonly addedBytes: number;
}
