import type { Writable } from 'node:stream';
import { PassThrough, Readable, Transform } from 'node:stream';
import { snapshotEntries } from '../workspace/snapshot-entries';
import type { ArchiveBounds, ExecResult, SnapshotOptions } from './sandbox-provider.port';

/** How a provider runs GNU tar in a workspace (as its task, in its sandbox where it has one). */
export interface TarIo {
  readonly stdin: Readable;
  /** The archive a snapshot writes; absent when restoring. */
  readonly stdout?: Writable;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}
export type RunTar = (args: readonly string[], io: TarIo) => Promise<ExecResult>;

/** A workspace ready to be archived: the path the service reads it by, and tar run in it. */
export interface ArchiveSource {
  readonly root: string;
  readonly runTar: RunTar;
}

/**
 * POSIX (pax) archives of the names it is given on stdin, exactly those (NUL-separated, read
 * verbatim: a name starting with "-" is a name, not an option), with holes kept as holes: a sparse
 * file costs the archive what it holds, not its apparent size.
 */
const CREATE = [
  '--create',
  '--file=-',
  '--format=posix',
  '--sparse',
  '--no-recursion',
  '--null',
  '--verbatim-files-from',
  '--files-from=-',
];
/** Extracting as the task: owners are the task's own, modes as archived less the umask; absolute names and `..` refused by tar. */
const EXTRACT = ['--extract', '--file=-', '--no-same-owner', '--delay-directory-restore', '--read-full-records', '--blocking-factor=256'];
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/**
 * A tar stream of the workspace. The service lists what goes in (snapshotEntries: no link
 * followed, FIFOs, sockets and devices left out and reported); tar, run as the task where the
 * provider sandboxes, reads exactly those names. Not compressed: gzip made a 100 MB snapshot ten
 * times slower (BENCHMARKS.md). Fails past `maxBytes` of archive, past `timeoutMs`, or when
 * `signal` fires.
 */
export function archiveWorkspace(open: () => Promise<ArchiveSource>, options: SnapshotOptions): Readable {
  const out = new PassThrough();
  const stop = new AbortController();
  let failure: Error | undefined;
  const fail = (error: Error) => {
    failure ??= error;
    stop.abort();
  };
  const onAbort = () => fail(new Error('snapshot stopped: the sandbox is in use again'));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const timer = setTimeout(
    () => fail(new Error(`snapshot took longer than ${options.timeoutMs} ms (SANDBOX_SNAPSHOT_TIMEOUT_MS)`)),
    options.timeoutMs,
  );
  timer.unref();
  const limiter = byteLimit(options.maxBytes, 'snapshot');
  limiter.on('error', fail);
  // tar's pipe comes in 64 KiB reads: gathered into pieces of 1 MiB, the object store writes (and hashes) a sixteenth as often.
  limiter.pipe(gathered(1024 * 1024)).pipe(out);

  void (async () => {
    try {
      if (failure) throw failure;
      const source = await open();
      const names = Readable.from(nulSeparated(snapshotEntries(source.root, options.onSkipped)));
      names.on('error', fail);
      const result = await source.runTar(CREATE, { stdin: names, stdout: limiter, timeoutMs: options.timeoutMs, signal: stop.signal });
      if (failure) throw failure;
      if (result.exitCode !== 0) throw new Error(`tar could not archive the workspace: ${tarSays(result)}`);
      limiter.end(); // flows on through the gatherer, which ends `out`
    } catch (error) {
      out.destroy(failure ?? (error as Error));
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  })();
  return out;
}

/**
 * Fills a fresh, empty workspace from an archive (a snapshot of ours, or a gzip'd one of older
 * versions), tar run as the task: whatever links, `..` or absolute names the archive holds, it
 * can write nothing the task could not. Bounded by `maxBytes` of archive and `timeoutMs`; what
 * it unpacks is bounded by the workspace itself. Rejects with tar's reason; the caller drops the
 * half-filled workspace.
 */
export async function restoreWorkspace(runTar: RunTar, archive: Readable, bounds: ArchiveBounds): Promise<void> {
  const stop = new AbortController();
  let failure: Error | undefined;
  const timer = setTimeout(() => {
    failure ??= new Error(`restore took longer than ${bounds.timeoutMs} ms (SANDBOX_SNAPSHOT_TIMEOUT_MS)`);
    stop.abort();
  }, bounds.timeoutMs);
  try {
    const { head, rest } = await peek(archive, GZIP_MAGIC.length);
    const metered = byteLimit(bounds.maxBytes, 'snapshot');
    metered.on('error', (error: Error) => {
      failure ??= error;
      stop.abort();
    });
    rest.on('error', (error: Error) => metered.destroy(error));
    rest.pipe(metered);
    const gzip = head.equals(GZIP_MAGIC) ? ['--gzip'] : [];
    const result = await runTar([...EXTRACT, ...gzip], { stdin: metered, timeoutMs: bounds.timeoutMs, signal: stop.signal });
    if (failure) throw failure;
    if (result.exitCode !== 0) throw new Error(`the snapshot could not be unpacked: ${tarSays(result)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** Passes bytes on in pieces of `size` (the last one shorter). */
function gathered(size: number): Transform {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const release = (stream: Transform) => {
    stream.push(Buffer.concat(pending, pendingBytes));
    pending = [];
    pendingBytes = 0;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes >= size) release(this);
      done();
    },
    flush(done) {
      if (pendingBytes > 0) release(this);
      done();
    },
  });
}

function byteLimit(maxBytes: number, what: string): Transform {
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new Error(`${what} exceeds ${maxBytes} bytes (SANDBOX_SNAPSHOT_MAX_BYTES)`));
      done(null, chunk);
    },
  });
}

async function* nulSeparated(names: AsyncIterable<string>): AsyncGenerator<Buffer> {
  for await (const name of names) yield Buffer.from(`${name}\0`);
}

/** The first `length` bytes of a stream, and the whole stream again (those bytes included). */
async function peek(stream: Readable, length: number): Promise<{ head: Buffer; rest: Readable }> {
  const chunks: Buffer[] = [];
  let size = 0;
  const iterator = stream[Symbol.asyncIterator]();
  while (size < length) {
    const next = (await iterator.next()) as IteratorResult<Buffer>;
    if (next.done) break;
    chunks.push(next.value);
    size += next.value.length;
  }
  const head = Buffer.concat(chunks);
  async function* all(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    for (;;) {
      const next = (await iterator.next()) as IteratorResult<Buffer>;
      if (next.done) return;
      yield next.value;
    }
  }
  return { head: head.subarray(0, length), rest: Readable.from(all(), { objectMode: false }) };
}

/** tar's own words, cut: what it said on stderr, else its exit. */
function tarSays(result: ExecResult): string {
  const said = result.output.trim().split('\n').slice(-3).join('; ');
  return said || (result.limitMessage ?? `exit ${result.exitCode}`);
}
