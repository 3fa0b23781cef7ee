import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { LocalObjectStore } from '@app/object-store/local/local-object-store';
import type { ScanResult } from '../../src/artifacts/artifact-scanner';
import { ArtifactScanner } from '../../src/artifacts/artifact-scanner';
import { BubblewrapProvider } from '../../src/provider/bubblewrap/bubblewrap.provider';
import type { ExecResult, SandboxLimits } from '../../src/provider/sandbox-provider.port';
import { TEST_LIMITS, taskIdFor, testSandboxConfig } from '../../src/provider/testing/sandbox-provider.contract';

export const HOST_CANARY = 'HOST-FILE-CANARY-3d1f';
export const OTHER_TASK_CANARY = 'OTHER-TASK-CANARY-88a2';
export const DATA_DIR_CANARY = 'DATA-DIR-CANARY-51c9';

/**
 * One real bubblewrap sandbox as an attacker gets it, and the service's own readers of its
 * workspace (artifact scan, snapshot, restore). DATA_DIR sits below a private (0700) folder, as
 * under root's home. Around it: a host folder with a canary file, the service's data with a
 * canary, and another task's workspace with a canary; every attempt is judged by whether any
 * of those canaries comes back.
 */
export interface EscapeFixture {
  readonly base: string;
  readonly dataDir: string;
  /** A host folder the sandbox cannot see, holding `canary.txt`. */
  readonly hostDir: string;
  readonly task: string;
  readonly other: string;
  readonly provider: BubblewrapProvider;
  readonly objects: LocalObjectStore;
  run(command: string, options?: { env?: Record<string, string>; timeoutMs?: number }): Promise<ExecResult>;
  /** The artifact scan the service runs after every tool call, with every recorded file's content. */
  scan(): Promise<ScanResult & { contents: string[] }>;
  /** Snapshot, tear down and restore the workspace, as expiry and the next call do. */
  snapshotAndRestore(): Promise<{ archive: Buffer; skipped: string[] }>;
  close(): Promise<void>;
}

export async function startEscapeFixture(limits: SandboxLimits = { ...TEST_LIMITS, timeoutMs: 10_000 }): Promise<EscapeFixture> {
  const base = await mkdtemp(join(tmpdir(), 'ats-escape-'));
  await chmod(base, 0o700);
  const dataDir = join(base, 'private', 'data');
  const hostDir = join(base, 'host');
  await mkdir(hostDir, { recursive: true });
  await writeFile(join(hostDir, 'canary.txt'), HOST_CANARY);
  await mkdir(join(dataDir, 'eventstore'), { recursive: true });
  await writeFile(join(dataDir, 'eventstore', 'canary'), DATA_DIR_CANARY);
  const provider = new BubblewrapProvider(testSandboxConfig('bubblewrap', limits), dataDir);
  const objects = new LocalObjectStore(join(base, 'objects'));
  const scanner = new ArtifactScanner(objects);
  const task = taskIdFor(41);
  const other = taskIdFor(42);
  await provider.create(task);
  await writeFile(join(await provider.create(other), 'secret.txt'), OTHER_TASK_CANARY);
  await mkdir(join(provider.workspacePath(other), 'downloads'), { recursive: true });
  await writeFile(join(provider.workspacePath(other), 'downloads', 'secret.txt'), OTHER_TASK_CANARY);
  const bounds = { maxBytes: 50_000_000, timeoutMs: 10_000 };

  return {
    base,
    dataDir,
    hostDir,
    task,
    other,
    provider,
    objects,
    run: (command, options = {}) => provider.exec(task, { command, env: options.env ?? {}, timeoutMs: options.timeoutMs }),
    async scan() {
      const result = await scanner.scan(task, provider.workspacePath(task), {});
      const contents = await Promise.all(result.records.map(async (r) => text(await objects.get(r.objectKey))));
      return { ...result, contents };
    },
    async snapshotAndRestore() {
      const skipped: string[] = [];
      const chunks: Buffer[] = [];
      for await (const chunk of provider.snapshot(task, { ...bounds, onSkipped: (path, why) => skipped.push(`${path}: ${why}`) }))
        chunks.push(chunk as Buffer);
      const archive = Buffer.concat(chunks);
      await provider.destroy(task);
      await provider.restore(task, Readable.from([archive]), bounds);
      return { archive, skipped };
    },
    async close() {
      // Unmounted and their uids and cgroups given back, before their backing files go.
      for (const id of [task, other]) await provider.destroy(id).catch(() => undefined);
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** Every canary a successful escape would bring back. */
export const CANARIES = [HOST_CANARY, OTHER_TASK_CANARY, DATA_DIR_CANARY];
