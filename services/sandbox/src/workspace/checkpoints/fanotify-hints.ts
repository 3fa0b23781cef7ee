import { Logger } from '@nestjs/common';
import type { ChildProcessByStdio } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { ChangeHints, Hints } from './change-hints';
import { NO_CHANGE_HINTS } from './change-hints';

/** An answer slower than this means the helper is stuck: it is killed, and every task walks once. */
const ANSWER_TIMEOUT_MS = 5_000;
/** A helper that keeps dying is started again at most this often (a missing capability would loop). */
const RESTART_EVERY_MS = 1_000;
const BINARY = join('dist', 'native', 'ats-fswatch');
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The change hints this host can give, said once at start: the helper where it is built and the
 * service is root (it needs CAP_SYS_ADMIN and CAP_DAC_READ_SEARCH), none otherwise.
 */
export function changeHintsForThisHost(binary = findFswatchBinary()): ChangeHints {
  const logger = new Logger('Checkpoints');
  const missing = !binary
    ? `${BINARY} is missing (scripts/build-native.sh builds it)`
    : process.getuid?.() !== 0
      ? 'the service is not root'
      : undefined;
  if (missing || !binary) {
    logger.log(`checkpoints walk the whole workspace after every step: ${missing}`);
    return NO_CHANGE_HINTS;
  }
  logger.log(`checkpoints re-list only the folders a step touched, told by ${binary} (fanotify; filesystem workspaces only)`);
  return new FanotifyHints(binary);
}

/** scripts/build-native.sh's output, found upward of this file: in the repository, and in dist/ of an image. */
export function findFswatchBinary(from: string = __dirname): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, BINARY))) return join(dir, BINARY);
    if (dirname(dir) === dir) return undefined;
  }
}

interface Answer {
  readonly end: 'K' | 'R' | 'E';
  readonly why: string;
  readonly touched: string[];
  readonly subtrees: string[];
  readonly names: Map<string, Set<string>>;
}

/**
 * The change hints of native/ats-fswatch (its header has the protocol): one helper per service
 * process, asked one question at a time, started again when it dies. A task watched by a helper
 * that died is watched again on the next one, and its next drain says 'rescan'.
 */
export class FanotifyHints implements ChangeHints {
  private readonly logger = new Logger('Checkpoints');
  private helper?: HelperProcess;
  private startedAt = 0;
  private queue: Promise<unknown> = Promise.resolve();
  /** Each watched task's mountpoint, and the helper holding its mark (none: the watch failed). */
  private readonly watched = new Map<string, { mountpoint: string; on?: HelperProcess }>();
  private readonly refusals = new Set<string>();

  constructor(private readonly binary: string) {}

  watch(taskId: string, mountpoint: string): Promise<void> {
    return this.serialised(async () => {
      const known = this.watched.get(taskId);
      const helper = this.current();
      if (known?.mountpoint === mountpoint && known.on && known.on === helper) return;
      if (known?.on && known.on === helper) await helper.ask(`unwatch ${taskId}`).catch(() => undefined);
      this.watched.set(taskId, { mountpoint, on: await this.mark(taskId, mountpoint, helper) });
    });
  }

  drain(taskId: string): Promise<Hints | 'rescan'> {
    return this.serialised(async () => {
      const known = this.watched.get(taskId);
      if (!known) return 'rescan';
      const helper = this.current();
      if (!helper) return 'rescan';
      if (known.on !== helper) {
        // Never watched, or by a helper that died since: what happened meanwhile is unknown, and
        // this answer stands for the helper's own first one (its "newly watched").
        known.on = await this.mark(taskId, known.mountpoint, helper);
        if (known.on) await helper.ask(`drain ${taskId}`).catch(() => undefined);
        return 'rescan';
      }
      const answer = await helper.ask(`drain ${taskId}`).catch(() => undefined);
      if (answer?.end !== 'K') {
        if (answer?.end === 'E' || !answer) known.on = undefined;
        return 'rescan';
      }
      // A folder re-listed whole needs no names.
      for (const folder of answer.touched) answer.names.delete(folder);
      return { touched: new Set([...answer.touched, ...answer.names.keys()]), subtrees: new Set(answer.subtrees), names: answer.names };
    });
  }

  unwatch(taskId: string): Promise<void> {
    return this.serialised(async () => {
      const known = this.watched.get(taskId);
      this.watched.delete(taskId);
      if (known?.on && !known.on.dead) await known.on.ask(`unwatch ${taskId}`).catch(() => undefined);
    });
  }

  close(): Promise<void> {
    return this.serialised(() => {
      this.helper?.stop();
      this.helper = undefined;
      this.watched.clear();
      return Promise.resolve();
    });
  }

  /** Nest's shutdown: the helper goes with the service (it would anyway, at the end of its stdin). */
  onModuleDestroy(): Promise<void> {
    return this.close();
  }

  private async mark(taskId: string, mountpoint: string, helper: HelperProcess | undefined): Promise<HelperProcess | undefined> {
    if (!helper) return undefined;
    const answer = await helper.ask(`watch ${taskId} ${mountpoint}`).catch((error: Error) => ({ end: 'E', why: error.message }));
    if (answer.end === 'K') return helper;
    // Said once per reason: a `folder` workspace is refused at every mount, and walks every step.
    if (!this.refusals.has(answer.why)) {
      this.refusals.add(answer.why);
      this.logger.log(`checkpoints walk the whole workspace of tasks whose workspace cannot be watched: ${answer.why}`);
    }
    return undefined;
  }

  private current(): HelperProcess | undefined {
    if (this.helper && !this.helper.dead) return this.helper;
    if (Date.now() - this.startedAt < RESTART_EVERY_MS) return undefined;
    if (this.helper) this.logger.warn(`the change detector stopped (${this.helper.lastWords}); started again, each task walks once`);
    this.startedAt = Date.now();
    this.helper = new HelperProcess(this.binary);
    return this.helper;
  }

  private serialised<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/** One running helper: questions go in on stdin, records come back on stdout. */
class HelperProcess {
  dead = false;
  lastWords = 'no reason given';
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private buffer: Buffer = Buffer.alloc(0);
  private said = '';
  private pending?: { answer: Omit<Answer, 'end' | 'why'>; resolve: (a: Answer) => void; reject: (e: Error) => void };

  constructor(binary: string) {
    this.child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'], env: {} });
    // It must never keep the service (or a test run) alive on its own.
    this.child.unref();
    for (const pipe of [this.child.stdin, this.child.stdout, this.child.stderr]) (pipe as unknown as { unref?: () => void }).unref?.();
    this.child.stdout.on('data', (chunk: Buffer) => this.read(chunk));
    this.child.stderr.on('data', (chunk: Buffer) => (this.said = chunk.toString('utf8').trim() || this.said));
    this.child.stdin.on('error', () => undefined);
    this.child.on('error', (error) => this.died(error.message));
    this.child.on('exit', (code, signal) => this.died(`exit ${signal ?? code}`));
  }

  ask(line: string): Promise<Answer> {
    if (this.dead) return Promise.reject(new Error(this.lastWords));
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => this.died(`no answer to "${line.split(' ')[0]}" within ${ANSWER_TIMEOUT_MS} ms`), ANSWER_TIMEOUT_MS);
      const done =
        <T>(settle: (value: T) => void) =>
        (value: T) => {
          clearTimeout(timer);
          this.pending = undefined;
          settle(value);
        };
      this.pending = { answer: { touched: [], subtrees: [], names: new Map() }, resolve: done(resolve), reject: done(reject) };
      this.child.stdin.write(`${line}\n`);
    });
  }

  stop(): void {
    this.child.stdin.end();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  private read(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    while (this.buffer.length >= 5) {
      const length = this.buffer.readUInt32BE(1);
      if (this.buffer.length < 5 + length) return;
      const type = String.fromCharCode(this.buffer[0]!);
      const payload = this.buffer.subarray(5, 5 + length);
      this.buffer = this.buffer.subarray(5 + length);
      this.record(type, payload);
    }
  }

  private record(type: string, payload: Buffer): void {
    const pending = this.pending;
    if (!pending) return this.died('an answer nobody asked for');
    if (type === 'K' || type === 'R' || type === 'E') {
      return pending.resolve({ ...pending.answer, end: type, why: payload.toString('utf8') });
    }
    if (type === 'N') {
      const nul = payload.indexOf(0);
      const [folder, name] = [utf8(payload.subarray(0, nul)), utf8(payload.subarray(nul + 1))];
      if (folder === undefined) return;
      // A name that is not UTF-8 is skipped by checkpoints; its folder is re-listed whole to be sure.
      if (name === undefined) return void pending.answer.touched.push(folder);
      const names = pending.answer.names.get(folder) ?? new Set<string>();
      pending.answer.names.set(folder, names.add(name));
      return;
    }
    const path = utf8(payload);
    // A path that is not UTF-8 names a folder no checkpoint holds (such names are skipped), and
    // its parent, where it was made, was touched too: nothing is lost by leaving it out.
    if (path === undefined) return;
    if (type === 'T') pending.answer.touched.push(path);
    else if (type === 'S') pending.answer.subtrees.push(path);
    else this.died(`an unknown record "${type}"`);
  }

  private died(why: string): void {
    if (!this.dead) this.lastWords = this.said ? `${why}: ${this.said}` : why;
    this.dead = true;
    this.pending?.reject(new Error(this.lastWords));
    this.stop();
  }
}

function utf8(raw: Buffer): string | undefined {
  try {
    return strictUtf8.decode(raw);
  } catch {
    return undefined;
  }
}
