/**
 * Which folders of a workspace a step touched, workspace-relative ('' the top): each folder in
 * `touched` is re-listed; each in `subtrees` (a folder made or moved there) is walked whole.
 * Everything else is as the last checkpoint saw it.
 */
export interface Hints {
  readonly touched: ReadonlySet<string>;
  readonly subtrees: ReadonlySet<string>;
  /**
   * For touched folders where the detector knows which entries changed: their names. Only those
   * are looked at again, the folder's other entries are taken as they were. A touched folder
   * without names here is re-listed whole.
   */
  readonly names?: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * Tells a checkpoint where to look instead of walking the whole workspace. 'rescan' whenever
 * what happened since the last drain is not known for sure (first drain after a watch, a
 * restart of the detector, an overflow): the checkpoint then walks everything.
 */
export interface ChangeHints {
  /** From now on, remember what changes under `mountpoint` (the root of the task's own filesystem). */
  watch(taskId: string, mountpoint: string): Promise<void>;
  /** What changed since the last drain (or the watch), forgotten once answered. */
  drain(taskId: string): Promise<Hints | 'rescan'>;
  /** Before the task's filesystem is unmounted. */
  unwatch(taskId: string): Promise<void>;
  close(): Promise<void>;
}

/** The Nest token of the host's ChangeHints (one per service process). */
export const CHANGE_HINTS = Symbol('CHANGE_HINTS');

/** No detector (no helper, folder workspaces): every checkpoint walks the whole workspace. */
export const NO_CHANGE_HINTS: ChangeHints = {
  watch: async () => undefined,
  drain: async () => 'rescan' as const,
  unwatch: async () => undefined,
  close: async () => undefined,
};
