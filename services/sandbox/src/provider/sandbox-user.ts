import { createHash } from 'node:crypto';
import { FileOwner } from './sandbox-provider.port';

/**
 * The unprivileged uid/gid a task's commands run as. RLIMIT_NPROC counts processes per real uid
 * (and root is exempt), so the fork-bomb limit only works for a non-root uid, and a uid per task
 * keeps one task's fork bomb from starving the others. Stable across restarts and instances.
 */
export function sandboxUserOf(taskId: string, uidBase: number, uidCount: number): FileOwner {
  const hash = createHash('sha256').update(taskId).digest().readUInt32BE(0);
  const id = uidBase + (hash % uidCount);
  return { uid: id, gid: id };
}
