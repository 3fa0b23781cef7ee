import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import type { CliContext } from '../context';
import { bytes } from '../event-printer';
import { downloadTarget, UnsafeArtifactPathError } from '../download-target';
import { ExitCode } from '../exit-codes';
import { safeLine } from '../untrusted-text';

/**
 * `ats download ID [PATH…] [-o DIR]`: the named artifacts, or all of them, into DIR (default the
 * current folder) without their `downloads/` prefix. A path that would land outside DIR is refused
 * and the others still written; the exit status is then 1.
 */
export async function downloadCommand(ctx: CliContext, taskId: string, paths: string[], options: { output: string }): Promise<ExitCode> {
  const { term } = ctx;
  const ats = await ctx.client();
  const wanted = paths.length > 0 ? paths : (await ats.artifacts.list(taskId)).map((file) => file.path);
  if (wanted.length === 0) term.line(term.colors.dim(`${safeLine(taskId)} has no artifacts`));
  let code: ExitCode = ExitCode.ok;
  for (const path of wanted) {
    let target: string;
    try {
      target = downloadTarget(options.output, path);
    } catch (error) {
      if (!(error instanceof UnsafeArtifactPathError)) throw error;
      term.error(`ats: ${safeLine(error.message)}`);
      code = ExitCode.failed;
      continue;
    }
    const file = await ats.artifacts.download(taskId, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, file.body);
    term.line(
      `${safeLine(path)} → ${safeLine(relative(process.cwd(), target) || target)} ${term.colors.dim(`(${bytes(file.body.byteLength)})`)}`,
    );
  }
  return code;
}
