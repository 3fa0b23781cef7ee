import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import type { CliContext } from '../context';
import { downloadTarget, UnsafeArtifactPathError } from '../download-target';
import { bytes } from '../event-printer';
import { CliExit, ExitCode } from '../exit-codes';
import { momentOf } from '../file-listing';
import { safeLine } from '../untrusted-text';

export interface FileGetOptions {
  readonly at?: number;
  readonly output?: string;
}

/**
 * `ats files ID --get PATH [--at N] [-o FILE]`: one workspace file's bytes as of event N. Without
 * -o it lands under the current folder at its path, checked as `ats download` checks artifact
 * paths (download-target.ts); either way an existing file is never overwritten.
 */
export async function fileGetCommand(ctx: CliContext, taskId: string, path: string, options: FileGetOptions): Promise<ExitCode> {
  const { term } = ctx;
  let target: string;
  try {
    target = options.output === undefined ? downloadTarget('.', path) : resolve(options.output);
  } catch (error) {
    if (!(error instanceof UnsafeArtifactPathError)) throw error;
    throw new CliExit(ExitCode.failed, `ats: ${safeLine(error.message)}`);
  }
  const ats = await ctx.client();
  const file = await ats.files.download(taskId, path, options.at === undefined ? {} : { at: options.at });
  await mkdir(dirname(target), { recursive: true });
  try {
    // wx: fails when the file exists, so a path from the service can never replace one of yours.
    await writeFile(target, file.body, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    throw new CliExit(ExitCode.failed, `ats: ${safeLine(relative(process.cwd(), target) || target)} exists; not overwritten`);
  }
  term.line(
    `${safeLine(path)} ${term.colors.dim(momentOf(options.at))} → ${safeLine(relative(process.cwd(), target) || target)} ${term.colors.dim(`(${bytes(file.body.byteLength)})`)}`,
  );
  return ExitCode.ok;
}
