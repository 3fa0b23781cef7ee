import { ValidationError } from '@app/common';

/**
 * CHECKPOINT_RETENTION: which of a task's checkpoints stay readable (files as of an event, forks)
 * and keep their bytes. `all` (the default), `last:N` (the last N of each task), or `age:<n>[smhd]`
 * (none older than that). A task's last checkpoint is always kept: it is its workspace.
 */
export type CheckpointRetention =
  { readonly keep: 'all' } | { readonly keep: 'last'; readonly count: number } | { readonly keep: 'age'; readonly maxAgeMs: number };

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseCheckpointRetention(text: string | undefined): CheckpointRetention {
  const value = (text ?? '').trim();
  if (value === '' || value === 'all') return { keep: 'all' };
  const last = /^last:([1-9][0-9]{0,8})$/.exec(value);
  if (last) return { keep: 'last', count: Number(last[1]) };
  const age = /^age:([1-9][0-9]{0,8})([smhd])$/.exec(value);
  if (age) return { keep: 'age', maxAgeMs: Number(age[1]) * UNIT_MS[age[2]] };
  throw new ValidationError(
    `CHECKPOINT_RETENTION must be "all", "last:N" (N ≥ 1) or "age:N" with a unit s, m, h or d (e.g. age:30d), not "${value}"`,
  );
}

/** A checkpoint as the history recorded it: at which event, and when. */
export interface RecordedCheckpoint<Ref> {
  readonly eventId: number;
  readonly recordedAt: string;
  readonly ref: Ref;
}

/** The checkpoints `retention` keeps of one task's, given in the order recorded. */
export function retainedCheckpoints<Ref>(
  recorded: readonly RecordedCheckpoint<Ref>[],
  retention: CheckpointRetention,
  now: number,
): RecordedCheckpoint<Ref>[] {
  if (recorded.length === 0 || retention.keep === 'all') return [...recorded];
  const last = recorded[recorded.length - 1];
  if (retention.keep === 'last') return recorded.slice(-retention.count);
  const kept = recorded.filter((c) => now - Date.parse(c.recordedAt) <= retention.maxAgeMs);
  return kept.includes(last) ? kept : [...kept, last];
}
