import type { EventStore } from '@app/event-store';
import type { ObjectStore } from '@app/object-store';
import { rootEntryOf } from './checkpoint-archive';
import type { CheckpointReader } from './checkpoint-reader';
import { recordedCheckpoints } from './recorded-checkpoints';
import type { CheckpointRetention } from './retention/checkpoint-retention';
import { retainedCheckpoints } from './retention/checkpoint-retention';

/** Objects one lineage may hold before a collection stops and says so (the listing is one read). */
export const MAX_LINEAGE_OBJECTS = 1_000_000;

/**
 * A fork names its source's checkpoints without writing under its own prefix: this marker tells
 * the collector that the fork's history holds references too.
 */
export function lineageMemberKey(lineage: string, taskId: string): string {
  return `checkpoints/${lineage}/members/${taskId}`;
}

export interface CollectedLineage {
  /** Objects kept: named by a checkpoint some member keeps, or too young to judge. */
  readonly kept: number;
  readonly deleted: readonly string[];
}

/**
 * Garbage collection of one fork tree's checkpoints (every checkpoint of a tree is stored under
 * its root task, the lineage): mark every object a kept checkpoint of any member has a piece in,
 * then delete the others, except those written within `graceMs` (a checkpoint stored whose event
 * is not appended yet). A pack is kept whole while any of its pieces is named.
 */
export async function collectLineage(
  deps: { readonly objects: ObjectStore; readonly reader: CheckpointReader; readonly store: EventStore },
  lineage: string,
  policy: { readonly retention: CheckpointRetention; readonly graceMs: number; readonly now: number },
): Promise<CollectedLineage> {
  const prefix = `checkpoints/${lineage}/`;
  const keys = await deps.objects.list(prefix, MAX_LINEAGE_OBJECTS);
  if (keys.length >= MAX_LINEAGE_OBJECTS) {
    throw new Error(`lineage ${lineage} holds ${MAX_LINEAGE_OBJECTS} objects or more: not collected (raise MAX_LINEAGE_OBJECTS)`);
  }
  const members = new Set([lineage]);
  for (const key of keys) {
    const member = /^members\/([^/]+)$/.exec(key.slice(prefix.length)) ?? /^([^/]+)\/[^/]+\.pack$/.exec(key.slice(prefix.length));
    if (member && member[1] !== 'blobs') members.add(member[1]);
  }
  const live = new Set<string>();
  const seenFolders = new Set<string>();
  for (const member of members) {
    const { checkpoints } = await recordedCheckpoints(deps.store, member);
    for (const { ref } of retainedCheckpoints(checkpoints, policy.retention, policy.now)) {
      if (ref.lineage === lineage) await deps.reader.objectKeys(rootEntryOf(ref), live, seenFolders);
    }
  }
  const deleted: string[] = [];
  for (const key of keys) {
    if (live.has(key) || key.startsWith(`${prefix}members/`)) continue;
    const writtenAt = writtenAtOf(key);
    if (writtenAt === undefined || policy.now - writtenAt < policy.graceMs) continue;
    await deps.objects.delete(key);
    deleted.push(key);
  }
  return { kept: keys.length - deleted.length, deleted };
}

/** When the writer made `key` (packs: `<seq>-<ms>-…`, big files: `<sha256>-<ms>`); undefined: not ours to judge. */
function writtenAtOf(key: string): number | undefined {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const match = /^[0-9]+-([0-9]{13})-[0-9a-f]+-[0-9]+\.pack$/.exec(name) ?? /^[0-9a-f]{64}-([0-9]{13})$/.exec(name);
  return match ? Number(match[1]) : undefined;
}
