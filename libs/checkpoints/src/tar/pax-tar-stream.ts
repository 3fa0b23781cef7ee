import { Readable, addAbortSignal } from 'node:stream';
import { END_OF_ARCHIVE, encodeHeaders, padding } from './tar-header';

/** One entry of a workspace tar, in the order it is written (a folder before what it holds). */
export interface TarEntry {
  /** Workspace-relative, '/'-separated, no leading '/', no empty, '.' or '..' segment. */
  readonly path: string;
  readonly kind: 'file' | 'dir' | 'symlink';
  /** Permission bits. */
  readonly mode: number;
  readonly mtimeMs: number;
  /** Files only. */
  readonly size: number;
  /** Symlinks only. */
  readonly target?: string;
  /** Files only: yields exactly `size` bytes. */
  readonly body?: () => Promise<Readable>;
}

/**
 * A POSIX pax archive of `entries`, for `restoreWorkspace` to unpack as the task. It is pulled:
 * an entry is read, and a body opened, only as the consumer reads, and bodies stream through
 * chunk by chunk, so memory stays flat whatever the sizes. An entry that is malformed, or a body
 * that fails or yields other than `size` bytes, destroys the stream with an error naming the
 * path: the archive ends broken, never silently wrong.
 */
export function paxTar(entries: AsyncIterable<TarEntry>, options: { signal?: AbortSignal } = {}): Readable {
  const tar = Readable.from(archiveChunks(entries), { objectMode: false });
  return options.signal ? addAbortSignal(options.signal, tar) : tar;
}

async function* archiveChunks(entries: AsyncIterable<TarEntry>): AsyncGenerator<Buffer> {
  for await (const entry of entries) {
    checkEntry(entry);
    const size = entry.kind === 'file' ? entry.size : 0;
    const linkpath = entry.kind === 'symlink' ? entry.target : undefined;
    yield encodeHeaders({ path: entry.path, type: entry.kind, mode: entry.mode, size, mtimeMs: entry.mtimeMs, linkpath });
    if (entry.kind === 'file') {
      yield* fileBody(entry);
      yield padding(size);
    }
  }
  yield END_OF_ARCHIVE;
}

/** The body's bytes, refusing more or fewer than the header promised (the header is already out). */
async function* fileBody(entry: TarEntry): AsyncGenerator<Buffer> {
  let sent = 0;
  try {
    // Leaving the loop early (an error, or the consumer gone) destroys the body stream.
    for await (const chunk of await entry.body!()) {
      sent += (chunk as Buffer).length;
      if (sent > entry.size) throw new Error(`its body yields more than its size, ${entry.size} bytes`);
      yield chunk as Buffer;
    }
  } catch (error) {
    throw new Error(`tar entry "${entry.path}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (sent !== entry.size) throw new Error(`tar entry "${entry.path}": its body yields ${sent} bytes, not its size, ${entry.size}`);
}

function checkEntry(entry: TarEntry): void {
  const refuse = (why: string) => new Error(`tar entry "${entry.path}": ${why}`);
  if (!['file', 'dir', 'symlink'].includes(entry.kind)) throw refuse(`unknown kind "${String(entry.kind)}"`);
  const segments = entry.path.split('/');
  if (entry.path.includes('\0') || segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw refuse("its path must be relative, with no empty, '.' or '..' segment");
  }
  if (!Number.isFinite(entry.mtimeMs)) throw refuse('its mtime is not a number');
  if (!Number.isInteger(entry.mode) || entry.mode < 0) throw refuse('its mode is not permission bits');
  if (entry.kind === 'file' && (!entry.body || !Number.isSafeInteger(entry.size) || entry.size < 0)) {
    throw refuse('a file needs a body and a size in whole bytes');
  }
  if (entry.kind === 'symlink' && (!entry.target || entry.target.includes('\0'))) throw refuse('a link needs a target');
}
