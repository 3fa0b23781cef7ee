import type { ArtifactRecord, TaskEvent } from '../task.events';

/**
 * The artifact events a tool call causes: the files under `downloads/` after the call compared
 * with what the task already recorded. A file whose content is unchanged records nothing, even
 * if it was touched; a file that vanished is recorded as removed.
 */
export function diffArtifacts(
  known: Readonly<Record<string, ArtifactRecord>>,
  current: readonly ArtifactRecord[],
  callId: string,
): TaskEvent[] {
  const events: TaskEvent[] = [];
  const seen = new Set<string>();
  for (const record of [...current].sort((a, b) => a.path.localeCompare(b.path))) {
    seen.add(record.path);
    const before = known[record.path];
    if (before && before.sha256 === record.sha256 && before.size === record.size) continue;
    events.push({ type: 'ArtifactRecorded', data: { ...record, callId } });
  }
  for (const path of Object.keys(known).sort()) {
    if (!seen.has(path)) events.push({ type: 'ArtifactRemoved', data: { path, callId } });
  }
  return events;
}
