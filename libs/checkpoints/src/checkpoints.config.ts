import { intFromEnv } from '@app/common';
import type { CheckpointRetention } from './retention/checkpoint-retention';
import { parseCheckpointRetention } from './retention/checkpoint-retention';

export interface CheckpointSettings {
  /** CHECKPOINT_RETENTION: which checkpoints of a task stay. */
  readonly retention: CheckpointRetention;
  /** CHECKPOINT_GC_GRACE_MS: objects younger than this are never collected. */
  readonly gcGraceMs: number;
}

export function checkpointSettingsFromEnv(env: NodeJS.ProcessEnv): CheckpointSettings {
  return {
    retention: parseCheckpointRetention(env.CHECKPOINT_RETENTION),
    gcGraceMs: intFromEnv(env, 'CHECKPOINT_GC_GRACE_MS', 3_600_000, { min: 0 }),
  };
}
