import { createWriteStream } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type * as yauzl from 'yauzl';
import { AppError, PayloadTooLargeError, ValidationError } from '@app/common';
import type { FileOwner } from '../provider/sandbox-provider.port';
import { moveInto } from './move-into';
import type { UploadLimits } from './upload-limits';
import type { CheckedEntry } from './zip-entries';
import { checkZipEntries } from './zip-entries';

interface Extraction {
  readonly label: string;
  readonly limits: UploadLimits;
  readonly owner?: FileOwner;
}

/**
 * Extracts a ZIP into `targetDir`, keeping its folders, all or nothing. Every entry is checked on
 * the central directory before the first byte is written (zip-entries.ts). The entries are then
 * written to a fresh staging folder next to `targetDir`, counting the REAL decompressed bytes
 * against the cap since declared sizes can lie (yauzl also checks each entry's size as it
 * inflates), and only then moved in, refusing any entry that would replace one already there.
 * `label` names the archive in error messages; the staged file name is not the uploaded one.
 */
export async function extractZip(
  zipPath: string,
  targetDir: string,
  limits: UploadLimits,
  owner?: FileOwner,
  label = basename(zipPath),
): Promise<void> {
  const zip = await openZip(zipPath, label);
  let staging: string | undefined;
  try {
    const entries = await checkZipEntries(zip, label, limits);
    staging = await mkdtemp(join(dirname(targetDir), `.${basename(targetDir)}.unzip-`));
    await writeEntries(zip, entries, staging, { label, limits, owner });
    await moveInto(
      staging,
      targetDir,
      (path) => new ValidationError(`archive "${label}": entry "${path}" clashes with a file of the same name already in place`),
    );
  } finally {
    zip.close();
    if (staging) await rm(staging, { recursive: true, force: true });
  }
}

async function writeEntries(
  zip: yauzl.ZipFile,
  entries: readonly CheckedEntry[],
  staging: string,
  { label, limits, owner }: Extraction,
): Promise<void> {
  let written = 0;
  const counter = () =>
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        written += chunk.length;
        if (written <= limits.zipMaxUncompressedBytes) return done(null, chunk);
        done(
          new PayloadTooLargeError(
            `archive "${label}" unpacks to more than ${limits.zipMaxUncompressedBytes} bytes (ZIP_MAX_UNCOMPRESSED_BYTES)`,
          ),
        );
      },
    });
  for (const { path, directory, executable, entry } of entries) {
    const target = join(staging, ...path.split('/'));
    const refuse = (why: string) => new ValidationError(`archive "${label}": entry "${path.slice(0, 200)}" ${why}`);
    try {
      await makeDirs(staging, directory ? target : dirname(target), owner);
      if (directory) continue;
      const mode = executable ? 0o755 : 0o644;
      await pipeline(await openEntry(zip, entry), counter(), createWriteStream(target, { flags: 'wx', mode }));
      await chmod(target, mode);
      if (owner) await chown(target, owner.uid, owner.gid);
    } catch (error) {
      if (error instanceof AppError) throw error;
      const { code, syscall } = error as NodeJS.ErrnoException;
      if (['EEXIST', 'EISDIR', 'ENOTDIR'].includes(code ?? '')) throw refuse('appears twice, or as both a file and a folder');
      // Filesystem trouble (a full disk) is ours; anything else comes from reading the archive.
      if (syscall) throw error;
      throw refuse(`is damaged (${(error as Error).message})`);
    }
  }
}

/** `mkdir -p` below `root`; each folder it creates gets 0755 whatever the umask, and the owner. */
async function makeDirs(root: string, dir: string, owner?: FileOwner): Promise<void> {
  if (dir === root) return;
  const first = await mkdir(dir, { recursive: true });
  if (!first) return;
  // mkdir reports the first folder it made; every one below it is new as well.
  for (let current = dir; current.length >= first.length; current = dirname(current)) {
    await chmod(current, 0o755);
    if (owner) await chown(current, owner.uid, owner.gid);
  }
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream))));
}

async function openZip(path: string, label: string): Promise<yauzl.ZipFile> {
  // Loaded at the first ZIP upload: most starts never see one (BENCHMARKS.md, "Footprint").
  const { open } = await import('yauzl');
  // Backslashes become `/` (old Windows archives) before the names are checked; sizes are verified while inflating.
  const options: yauzl.Options = { lazyEntries: true, autoClose: false, strictFileNames: false, validateEntrySizes: true };
  return new Promise((resolve, reject) =>
    open(path, options, (error, zip) => {
      if (!error) return resolve(zip);
      reject(
        (error as NodeJS.ErrnoException).syscall
          ? error
          : new ValidationError(`archive "${label}" is not a valid ZIP file (${error.message})`),
      );
    }),
  );
}
