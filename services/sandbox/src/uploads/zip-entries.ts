import type * as yauzl from 'yauzl';
import { PayloadTooLargeError, ValidationError } from '@app/common';
import type { UploadLimits } from './upload-limits';

/** Below this size a high compression ratio is harmless (a file of zeros compresses 1000:1). */
const RATIO_APPLIES_ABOVE = 1024 * 1024;
/**
 * The filesystem's own limits, checked up front so that they are a 400 naming the entry rather
 * than ENAMETOOLONG halfway through. PATH_MAX (4096) counts the whole absolute path, so room is
 * left for the workspace's own; NAME_MAX is 255 bytes per name.
 */
const MAX_PATH_BYTES = 3072;
const MAX_NAME_BYTES = 255;
const MAX_FOLDER_DEPTH = 64;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

export interface CheckedEntry {
  readonly path: string;
  readonly directory: boolean;
  readonly executable: boolean;
  readonly entry: yauzl.Entry;
}

/**
 * Reads the central directory and refuses, before anything is written: paths that are absolute,
 * carry `..`, a drive letter, a backslash or NUL, or are too long or deep for the filesystem
 * (400), symlinks and encrypted entries (400), and archives past the entry count, declared size
 * or compression ratio caps (413).
 */
export async function checkZipEntries(zip: yauzl.ZipFile, label: string, limits: UploadLimits): Promise<CheckedEntry[]> {
  if (zip.entryCount > limits.zipMaxEntries) {
    throw new PayloadTooLargeError(`archive "${label}" has ${zip.entryCount} entries, over ${limits.zipMaxEntries} (ZIP_MAX_ENTRIES)`);
  }
  const entries: CheckedEntry[] = [];
  let declared = 0;
  for await (const entry of readEntries(zip, label)) {
    const name = entry.fileName;
    const refuse = (why: string) => new ValidationError(`archive "${label}": entry "${name.slice(0, 200)}" ${why}`);
    if (name.includes('\\') || name.includes('\0') || /^[A-Za-z]:/.test(name)) throw refuse('has a path that is not portable');
    if (name.startsWith('/')) throw refuse('has an absolute path');
    if (name.split('/').some((s) => s === '..')) throw refuse('escapes the workspace');
    const mode = (entry.externalFileAttributes >>> 16) & 0xffff;
    if ((mode & S_IFMT) === S_IFLNK) throw refuse('is a symbolic link; links are not extracted');
    if ((entry.generalPurposeBitFlag & 0x1) !== 0) throw refuse('is encrypted');
    declared += entry.uncompressedSize;
    if (declared > limits.zipMaxUncompressedBytes) {
      throw new PayloadTooLargeError(
        `archive "${label}" unpacks to more than ${limits.zipMaxUncompressedBytes} bytes (ZIP_MAX_UNCOMPRESSED_BYTES)`,
      );
    }
    if (entry.uncompressedSize > RATIO_APPLIES_ABOVE && entry.uncompressedSize / Math.max(entry.compressedSize, 1) > limits.zipMaxRatio) {
      throw new PayloadTooLargeError(
        `archive "${label}": entry "${name.slice(0, 200)}" is compressed more than ${limits.zipMaxRatio}:1 (ZIP_MAX_RATIO)`,
      );
    }
    const segments = name.split('/').filter((s) => s !== '' && s !== '.');
    const path = segments.join('/');
    if (path === '') continue;
    if (segments.some((s) => Buffer.byteLength(s) > MAX_NAME_BYTES)) throw refuse(`has a name longer than ${MAX_NAME_BYTES} bytes`);
    if (segments.length - 1 > MAX_FOLDER_DEPTH) throw refuse(`is nested more than ${MAX_FOLDER_DEPTH} folders deep`);
    if (Buffer.byteLength(path) > MAX_PATH_BYTES) throw refuse(`has a path longer than ${MAX_PATH_BYTES} bytes`);
    entries.push({ path, directory: name.endsWith('/'), executable: (mode & 0o111) !== 0, entry });
  }
  return entries;
}

/** yauzl refuses unsafe names itself; its errors become the same 400s as ours. */
function refusal(error: Error, label: string): ValidationError {
  const [, kind, name] = /^(invalid relative path|absolute path|invalid characters in fileName): (.*)$/.exec(error.message) ?? [];
  if (kind === 'invalid relative path')
    return new ValidationError(`archive "${label}": entry "${name.slice(0, 200)}" escapes the workspace`);
  if (kind === 'absolute path') return new ValidationError(`archive "${label}": entry "${name.slice(0, 200)}" has an absolute path`);
  if (kind) return new ValidationError(`archive "${label}": entry "${name.slice(0, 200)}" has a path that is not portable`);
  return new ValidationError(`archive "${label}" is damaged (${error.message})`);
}

async function* readEntries(zip: yauzl.ZipFile, label: string): AsyncGenerator<yauzl.Entry> {
  for (;;) {
    const next = await new Promise<yauzl.Entry | undefined>((resolve, reject) => {
      const onEntry = (entry: yauzl.Entry) => done(() => resolve(entry));
      const onEnd = () => done(() => resolve(undefined));
      const onError = (error: Error) => done(() => reject(refusal(error, label)));
      const done = (settle: () => void) => {
        zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
        settle();
      };
      zip.once('entry', onEntry).once('end', onEnd).once('error', onError);
      zip.readEntry();
    });
    if (!next) return;
    yield next;
  }
}
