import { execFile } from 'node:child_process';

/** A host tool (mount, mkfs) that takes longer than this is stuck: a mount on a hung device. */
const HOST_COMMAND_TIMEOUT_MS = 30_000;

/**
 * Runs one of the host's own tools as the service (root), for workspace volumes. Only paths the
 * service made (under DATA_DIR and SANDBOX_RUNTIME_DIR) and fixed options reach its argv; nothing
 * a task controls ever does, and the environment is a fixed one, so no task value can steer it.
 */
export function hostCommand(file: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C' }, timeout: HOST_COMMAND_TIMEOUT_MS, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const said = `${stderr}`.trim() || `${stdout}`.trim() || error.message;
        reject(new Error(`${file.split('/').pop()} failed: ${said}`));
      },
    );
  });
}
