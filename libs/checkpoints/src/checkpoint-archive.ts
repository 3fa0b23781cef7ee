import type { Readable } from 'node:stream';
import type { CheckpointRef, TreeEntry } from '@app/task-domain';
import type { CheckpointReader } from './checkpoint-reader';
import type { TarEntry } from './tar/pax-tar-stream';
import { paxTar } from './tar/pax-tar-stream';

/** The top folder of a checkpoint, as an entry a reader walks from. */
export function rootEntryOf(ref: CheckpointRef): TreeEntry {
  return { name: '', kind: 'dir', mode: 0o755, size: 0, mtimeMs: 0, sha256: ref.root.sha256, at: ref.root.at };
}

/**
 * The workspace of a checkpoint as a pax archive, streamed piece by piece from its packs: what a
 * sandbox restores from when its workspace is gone (expired, its instance lost, a fork's first
 * use). The provider unpacks it as the task, so nothing in it can land outside the workspace.
 */
export function checkpointArchive(reader: CheckpointReader, ref: CheckpointRef, signal?: AbortSignal): Readable {
  return paxTar(entriesOf(reader, rootEntryOf(ref)), { signal });
}

async function* entriesOf(reader: CheckpointReader, root: TreeEntry): AsyncGenerator<TarEntry> {
  // Folder times are not kept (they move with every file made and removed in them): restored ones get the time of the restore.
  const now = Date.now();
  for await (const { path, entry } of reader.walk(root)) {
    const common = { path, mode: entry.mode, mtimeMs: entry.mtimeMs };
    if (entry.kind === 'dir') yield { ...common, kind: 'dir', size: 0, mtimeMs: now };
    else if (entry.kind === 'symlink') yield { ...common, kind: 'symlink', size: 0, target: entry.target ?? '' };
    else yield { ...common, kind: 'file', size: entry.size, body: () => reader.open(entry) };
  }
}
