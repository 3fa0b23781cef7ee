import { spawn } from 'node:child_process';
import { access, mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** How long initdb in the child may take before it is stopped (a few seconds on a quiet machine). */
export const CREATE_DATABASE_TIMEOUT_MS = 120_000;

const CHILD_SCRIPT = join(__dirname, 'create-pglite-database.child.js');
const STDERR_TAIL_CHARS = 2_000;
const STAGING_SUFFIX = '.creating-';

/**
 * Makes sure dataDir holds a PGlite database, creating it in a short-lived child process when it
 * does not: initdb takes a process to ~800 MiB RSS that it never gives back, reopening costs
 * ~270 MiB (BENCHMARKS.md, "Footprint"). The child writes into a sibling directory that is renamed
 * into place once complete, so a failed or stopped creation never leaves a half-made database
 * that a later start would take for a real one.
 */
export async function ensurePgliteDatabase(dataDir: string, timeoutMs = CREATE_DATABASE_TIMEOUT_MS): Promise<void> {
  if (await holdsDatabase(dataDir)) return;
  await mkdir(dirname(dataDir), { recursive: true });
  await removeAbandonedStaging(dataDir);
  const staging = `${dataDir}${STAGING_SUFFIX}${process.pid}`;
  try {
    await runChild(staging, dataDir, timeoutMs);
    await rmdir(dataDir).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw new Error(`${dataDir} holds files but no PGlite database (${error.code ?? error.message})`);
    });
    await rename(staging, dataDir);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * A service killed while its child ran initdb leaves its staging directory behind (~40 MiB);
 * the next creation removes those whose process is gone, its own pid's included.
 */
async function removeAbandonedStaging(dataDir: string): Promise<void> {
  const prefix = `${basename(dataDir)}${STAGING_SUFFIX}`;
  for (const name of await readdir(dirname(dataDir))) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (Number.isInteger(pid) && (pid === process.pid || !isRunning(pid))) {
      await rm(join(dirname(dataDir), name), { recursive: true, force: true });
    }
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** PostgreSQL's data directory marker, written by initdb. */
async function holdsDatabase(dataDir: string): Promise<boolean> {
  return access(join(dataDir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
}

function runChild(staging: string, dataDir: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    // execArgv is left out on purpose: the script is plain JavaScript and needs no ts-node/jest loader.
    // env is passed explicitly so the child sees the caller's view of it (jest gives a test its own copy).
    const child = spawn(process.execPath, [CHILD_SCRIPT, staging], { stdio: ['ignore', 'ignore', 'pipe'], env: process.env });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`could not start the process creating the PGlite database in ${dataDir}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const why = timedOut ? `did not finish within ${timeoutMs} ms and was stopped` : `exited with ${signal ?? `code ${code}`}`;
      reject(
        new Error(
          `creating the PGlite database in ${dataDir} failed: the child process ${why}${stderr ? `; stderr: ${stderr.trim()}` : ''}`,
        ),
      );
    });
  });
}
