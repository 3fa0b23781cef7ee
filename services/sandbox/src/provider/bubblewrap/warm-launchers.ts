import type { ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

/** Starts a task's launcher and places it in the task's cgroup; undefined when it could not. */
export type StartLauncher = () => Promise<ChildProcess | undefined>;

/**
 * Each task's next shell launcher, started ahead of its command: forked, dropped to the task's
 * uid, prlimit'ed, bwrap loaded and blocked reading its options (nothing of the task is in it
 * yet), and already in the task's cgroup. Joining a cgroup waits for a kernel RCU grace period
 * (cgroup v1, and v2 without favordynmods), milliseconds a command would otherwise wait at its
 * start; this way it waits while the task is between commands. A launcher holds one of the
 * task's processes while it waits.
 *
 * If the service dies, a waiting launcher's options pipe closes empty: bwrap then has no mount
 * to run a program from, and the shell would be given no command anyway (SHELL_ARGV).
 */
export class WarmLaunchers {
  private readonly waiting = new Map<number, Promise<ChildProcess | undefined>>();

  /** Starts the next launcher for `uid`, unless one waits already. */
  prepare(uid: number, start: StartLauncher): void {
    if (this.waiting.has(uid)) return;
    this.waiting.set(
      uid,
      start().then(
        (launcher) => launcher && holdLoop(launcher, false),
        () => undefined,
      ),
    );
  }

  /** The waiting launcher of `uid`, if one is there and alive; it is then the caller's. */
  async take(uid: number): Promise<ChildProcess | undefined> {
    const waiting = this.waiting.get(uid);
    this.waiting.delete(uid);
    const launcher = await waiting;
    if (!launcher || launcher.exitCode !== null || launcher.signalCode !== null) return undefined;
    return holdLoop(launcher, true);
  }

  /** Kills the waiting launcher of `uid` (its workspace goes away). */
  async discard(uid: number): Promise<void> {
    const launcher = await this.take(uid);
    if (launcher?.pid) killGroup(launcher.pid);
  }

  /** Kills every waiting launcher (the service stops). */
  async discardAll(): Promise<void> {
    await Promise.all([...this.waiting.keys()].map((uid) => this.discard(uid)));
  }
}

/**
 * A waiting launcher must not keep the service's process alive (nor a test runner's): it and
 * its pipes hold the event loop only once a command runs in it.
 */
function holdLoop(launcher: ChildProcess, hold: boolean): ChildProcess {
  const handles: ({ ref(): unknown; unref(): unknown } | null)[] = [launcher, ...(launcher.stdio as (Socket | null)[])];
  for (const handle of handles) {
    if (hold) handle?.ref();
    else handle?.unref();
  }
  return launcher;
}

/** SIGKILLs a launcher's whole process group. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone already
  }
}
