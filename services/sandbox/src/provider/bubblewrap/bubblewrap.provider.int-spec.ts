import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer as createHttpServer } from 'node:http';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { egressConfigFromEnv } from '../../egress/egress.config';
import type { SandboxConfig } from '../sandbox.config';
import type { SandboxLimits } from '../sandbox-provider.port';
import { TEST_LIMITS, describeSandboxProviderContract, taskIdFor, testSandboxConfig } from '../testing/sandbox-provider.contract';
import { BubblewrapProvider } from './bubblewrap.provider';

const config = (limits: SandboxLimits, changes: Partial<SandboxConfig> = {}): SandboxConfig =>
  testSandboxConfig('bubblewrap', limits, changes);

describeSandboxProviderContract('bubblewrap', (dataDir, limits) => new BubblewrapProvider(config(limits), dataDir));

// Where the host gives no loop devices and no cgroup (or they are turned off): a watched folder
// and per-process rlimits, weaker (the start-up warnings say how), yet the same contract.
const fallbacks = (limits: SandboxLimits) => testSandboxConfig('bubblewrap', limits, { workspaceFs: 'folder', cgroups: 'off' });
describeSandboxProviderContract('bubblewrap with its fallbacks', (dataDir, limits) => new BubblewrapProvider(fallbacks(limits), dataDir));

describe('bubblewrap with its fallbacks (a watched folder, rlimits)', () => {
  let dataDir: string;
  const task = taskIdFor(3);
  beforeAll(async () => (dataDir = await mkdtemp(join(tmpdir(), 'ats-bwrap-fallbacks-'))));
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('says at start-up which bounds fall back to what', async () => {
    const health = await new BubblewrapProvider(fallbacks(TEST_LIMITS), dataDir).check();
    expect(health.ok).toBe(true);
    expect(health.warnings).toEqual([
      expect.stringMatching(/^disk: no filesystem per workspace \(SANDBOX_WORKSPACE_FS=folder\): .*watcher every 250 ms/),
      expect.stringMatching(/^memory and processes: no per-task cgroup \(SANDBOX_CGROUPS=off\): memory falls back to RLIMIT_AS/),
    ]);
  });

  it("bounds a task's processes by RLIMIT_NPROC of its own uid, and each process's memory", async () => {
    const provider = new BubblewrapProvider(fallbacks({ ...TEST_LIMITS, timeoutMs: 10_000, memoryBytes: 256 * 1024 * 1024 }), dataDir);
    try {
      const processes = await provider.exec(task, {
        // The shell's own complaint is how a refused fork shows here (no cgroup counts them).
        command: 'for i in $(seq 1 100); do (echo "up $i"; exec sleep 2) & done; sleep 1.5',
        env: {},
      });
      const started = processes.output.match(/^up \d+$/gm)?.length ?? 0;
      expect(started).toBeGreaterThan(TEST_LIMITS.maxProcesses / 2);
      expect(started).toBeLessThanOrEqual(TEST_LIMITS.maxProcesses);
      expect(processes.limitHit).toBe('processes');
      const memory = await provider.exec(task, { command: 'python3 -c "x = bytearray(512 * 1024 * 1024)"', env: {} });
      expect(memory.limitHit).toBe('memory');
    } finally {
      await provider.destroy(task);
    }
  }, 30_000);
});

// The escape attempts (host files, other tasks, /proc, namespaces, seccomp, memory folders, fork
// bombs, the network off…) are the escape suite: services/sandbox/test/escape/.
describe('bubblewrap limits and options', () => {
  let dataDir: string;
  const task = taskIdFor(2);
  beforeAll(async () => (dataDir = await mkdtemp(join(tmpdir(), 'ats-bwrap-'))));
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('reaches the network only through the egress proxy (SANDBOX_NETWORK=egress), and records each connection', async () => {
    // The "internet": a host loopback address other than 127.0.0.1, which NO_PROXY keeps for the sandbox's own loopback.
    const server: Server = createHttpServer((_req, res) => res.end('THROUGH-THE-PROXY\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const egress = egressConfigFromEnv({ SANDBOX_EGRESS_ALLOW_HOSTS: `127.0.0.2:${port}` });
      const open = new BubblewrapProvider(config(TEST_LIMITS, { network: 'egress', egress }), dataDir);
      const result = await open.exec(task, {
        command: `curl -sS http://127.0.0.2:${port}/; exec 3<>/dev/tcp/127.0.0.2/${port} && echo DIRECT-REACHED`,
        env: {},
        timeoutMs: 10_000,
      });
      expect(result.output).toContain('THROUGH-THE-PROXY');
      expect(result.output).not.toContain('DIRECT-REACHED');
      expect(result.egress).toEqual([
        {
          host: '127.0.0.2',
          port,
          allowed: true,
          bytesOut: expect.any(Number),
          bytesIn: expect.any(Number),
          durationMs: expect.any(Number),
        },
      ]);
      expect(result.egress?.[0].bytesIn).toBeGreaterThan(0);
      await open.destroy(task);
    } finally {
      server.close();
    }
  });

  it('reports a CPU limit and a memory limit', async () => {
    const limits = { ...TEST_LIMITS, cpuSeconds: 1, timeoutMs: 10_000, memoryBytes: 256 * 1024 * 1024 };
    const tight = new BubblewrapProvider(config(limits), dataDir);
    const cpu = await tight.exec(task, { command: 'while true; do :; done', env: {} });
    expect(cpu.limitHit).toBe('cpu');
    // With CPU time to spare: on this VM first-touch page faults cost ~5 ms of CPU per MiB (128 MiB
    // took 0.6 s), so one CPU second could run out before 256 MiB were ever reached.
    const roomy = new BubblewrapProvider(config({ ...limits, cpuSeconds: 30 }), dataDir);
    const memory = await roomy.exec(task, { command: 'python3 -c "x = bytearray(512 * 1024 * 1024)"', env: {} });
    expect(memory.limitHit).toBe('memory');
  }, 30_000);

  it('a restore cut short (the service crashed) leaves no workspace behind, never half of one', async () => {
    const first = new BubblewrapProvider(config(TEST_LIMITS), dataDir);
    const id = taskIdFor(4);
    await first.exec(id, { command: 'echo kept > kept.txt', env: {} });
    const chunks: Buffer[] = [];
    for await (const chunk of first.snapshot(id, { maxBytes: 10_000_000, timeoutMs: 5000 })) chunks.push(chunk as Buffer);
    await first.destroy(id);
    // The archive's first half, then nothing more: tar is still unpacking when the "crash" comes.
    const stalled = new PassThrough();
    stalled.write(Buffer.concat(chunks).subarray(0, 1024));
    const restoring = first.restore(id, stalled, { maxBytes: 10_000_000, timeoutMs: 5000 }).catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // What a restarted service finds: no workspace, and a fresh one holding only its downloads/.
    const restarted = new BubblewrapProvider(config(TEST_LIMITS), dataDir);
    expect(await restarted.exists(id)).toBe(false);
    expect((await restarted.exec(id, { command: 'ls -A', env: {} })).output).toBe('downloads\n');
    stalled.destroy(new Error('crashed'));
    expect(await restoring).toBeInstanceOf(Error);
    expect((await restarted.exec(id, { command: 'ls -A', env: {} })).output).toBe('downloads\n');
    await restarted.destroy(id);
  });

  it('says at start-up how each bound is enforced here, with no warning where the host allows every one', async () => {
    const health = await new BubblewrapProvider(config(TEST_LIMITS), dataDir).check();
    expect(health).toMatchObject({ ok: true, warnings: [] });
    expect(health.enforced).toEqual([
      expect.stringMatching(/^disk: each workspace is an ext4 filesystem of 52428800 bytes \(SANDBOX_DISK_QUOTA_BYTES\) on a loop device/),
      expect.stringMatching(/^memory, processes, CPU share: per-task cgroups \(v[12]\): /),
      expect.stringMatching(/^privilege: every sandboxed process runs as the task's own host uid/),
    ]);
  });

  it('says exactly why it cannot run at start-up instead of failing later', async () => {
    const notADir = join(dataDir, 'a-file');
    await writeFile(notADir, 'x');
    const health = await new BubblewrapProvider(config(TEST_LIMITS), join(notADir, 'data')).check();
    expect(health.ok).toBe(false);
    expect(health.reason).toMatch(/^the probe workspace under DATA_DIR could not be prepared: .*ENOTDIR/);
  });

  it("passes the environment, loader variables included, and the sandbox user's passwd entry", async () => {
    const provider = new BubblewrapProvider(config(TEST_LIMITS), dataDir);
    const result = await provider.exec(task, {
      command: 'echo "$GIVEN $LD_LIBRARY_PATH $HOME"; getent passwd sandbox | cut -d: -f1,6',
      env: { GIVEN: 'yes', LD_LIBRARY_PATH: '/workspace/lib' },
    });
    expect(result.output).toBe('yes /workspace/lib /workspace\nsandbox:/workspace\n');
  });
});

describe('bubblewrap providers sharing one volume (sandbox instances of a cluster)', () => {
  it('check only ever touches a probe workspace of its own, so instances can check at the same time', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ats-shared-volume-'));
    const providers = [1, 2, 3].map(() => new BubblewrapProvider(config(TEST_LIMITS), dataDir));
    // Workspaces already on the volume (another instance's probe mid-check, tasks) must survive.
    const others = ['task_00000000000000000000000000000000', taskIdFor(7)];
    try {
      for (const id of others) await writeFile(join(await providers[0].create(id), 'mark'), 'x');
      const health = await Promise.all(providers.map((p) => p.check()));
      expect(health.map((h) => h.ok)).toEqual([true, true, true]);
      for (const id of others) await expect(stat(join(providers[0].workspacePath(id), 'mark'))).resolves.toBeTruthy();
    } finally {
      for (const id of others) await providers[0].destroy(id);
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
