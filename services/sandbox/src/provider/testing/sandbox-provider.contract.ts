import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { egressConfigFromEnv } from '../../egress/egress.config';
import type { SandboxConfig, SandboxProviderName } from '../sandbox.config';
import type { SandboxLimits, SandboxProvider } from '../sandbox-provider.port';

export const TEST_LIMITS: SandboxLimits = {
  timeoutMs: 2000,
  cpuSeconds: 5,
  memoryBytes: 1024 * 1024 * 1024,
  maxProcesses: 64,
  maxOutputBytes: 64 * 1024,
  diskQuotaBytes: 50 * 1024 * 1024,
};

export const taskIdFor = (n: number) => `task_${String(n).padStart(32, '0')}`;

/** A provider's configuration as tests use it: the service's defaults, these limits, and what else the test changes. */
export function testSandboxConfig(
  provider: SandboxProviderName,
  limits: SandboxLimits = TEST_LIMITS,
  changes: Partial<SandboxConfig> = {},
): SandboxConfig {
  return {
    provider,
    limits,
    network: 'off',
    egress: egressConfigFromEnv({}),
    uidBase: 200_000,
    uidCount: 50_000,
    runtimeDir: '/run/agentic-task-service',
    workspaceFs: 'auto',
    cgroups: 'auto',
    ...changes,
  };
}

export interface ProviderFixture {
  readonly provider: SandboxProvider;
  readonly dataDir: string;
}

/** Every sandbox provider adapter's spec calls this with its own factory. */
export function describeSandboxProviderContract(name: string, make: (dataDir: string, limits: SandboxLimits) => SandboxProvider): void {
  describe(`SandboxProvider contract: ${name}`, () => {
    let dataDir: string;
    let provider: SandboxProvider;
    const task = taskIdFor(1);
    beforeEach(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'ats-sandbox-'));
      provider = make(dataDir, TEST_LIMITS);
      await provider.create(task);
    });
    afterEach(async () => rm(dataDir, { recursive: true, force: true }));

    const run = (command: string, extra: { env?: Record<string, string>; timeoutMs?: number; signal?: AbortSignal } = {}) =>
      provider.exec(task, { command, env: extra.env ?? {}, timeoutMs: extra.timeoutMs, signal: extra.signal });

    it('works here', async () => expect(await provider.check()).toMatchObject({ ok: true }));

    it('runs bash -lc in the workspace with the given env and reports the exit code', async () => {
      const ok = await run('echo "v=$MY_VAR"; echo err >&2; pwd > where.txt', { env: { MY_VAR: 'x y' } });
      expect(ok).toMatchObject({ exitCode: 0, truncated: false });
      expect(ok.output).toContain('v=x y');
      expect(ok.output).toContain('err');
      expect(await readFile(join(provider.workspacePath(task), 'where.txt'), 'utf8')).not.toBe('');
      expect((await run('exit 7')).exitCode).toBe(7);
      expect((await run('read line; echo "got:$line"')).output).toContain('got:');
    });

    it('makes a new workspace with a downloads/ folder the task owns and writes in at once', async () => {
      const made = await run('echo x > downloads/a.txt && cat downloads/a.txt && ls -A && stat -c %u . downloads');
      const [written, listed, rootOwner, downloadsOwner] = made.output.trim().split('\n');
      expect({ exitCode: made.exitCode, written, listed }).toEqual({ exitCode: 0, written: 'x', listed: 'downloads' });
      expect(downloadsOwner).toBe(rootOwner);
      const owner = provider.fileOwner(task);
      if (owner) expect(Number(downloadsOwner)).toBe(owner.uid);
    });

    // How fast is benchmark 7 (bench/moved-bounds.ts); the jest timeout only stops a hang.
    it('cuts 100 MB of output at the limit and says so', async () => {
      // A call's timeoutMs is capped at the provider's: this provider's 2 s would make a slow
      // machine hit the timeout before the output limit, so this one has room.
      const roomy = make(dataDir, { ...TEST_LIMITS, timeoutMs: 20_000 });
      const flooded = taskIdFor(2);
      await roomy.create(flooded);
      const command = 'head -c 100000000 /dev/zero | tr "\\0" a; echo done >&2';
      const result = await roomy.exec(flooded, { command, env: {}, timeoutMs: 20_000 });
      expect(result.truncated).toBe(true);
      expect(result.limitHit).toBe('output');
      expect(result.output.length).toBe(TEST_LIMITS.maxOutputBytes);
    }, 30_000);

    it('kills the whole process tree on timeout', async () => {
      // A background child that would outlive its shell counts into beat.txt every 50 ms. It is
      // watched through the workspace, not by pid: a provider's pid namespace hides the real pid.
      const beat = join(provider.workspacePath(task), 'beat.txt');
      const heartbeat = 'i=0; while true; do i=$((i+1)); echo $i > beat.txt; sleep 0.05; done';
      const result = await run(`(${heartbeat}) & while true; do :; done`, { timeoutMs: 500 });
      expect(result).toMatchObject({ exitCode: null, limitHit: 'timeout' });
      expect(result.limitMessage).toContain('500 ms');
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      await sleep(300);
      const afterKill = await readFile(beat, 'utf8');
      expect(Number(afterKill)).toBeGreaterThan(0); // the child did run
      await sleep(500); // ten beats' time: a living child would have counted on
      expect(await readFile(beat, 'utf8')).toBe(afterKill);
      const again = await run('echo alive');
      expect(again.output).toContain('alive');
    });

    it('stops a command when the task is cancelled', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      const result = await run('sleep 30', { signal: controller.signal, timeoutMs: 10_000 });
      expect(result).toMatchObject({ cancelled: true, exitCode: null });
      expect(result.durationMs).toBeLessThan(5000);
    });

    it('stops a 10 GB write at the disk quota and the files stay removable', async () => {
      const result = await run('head -c 10000000000 /dev/zero > big.bin; echo "rc=$?"', { timeoutMs: 20_000 });
      expect(result.limitHit).toBe('disk');
      const size = (await stat(join(provider.workspacePath(task), 'big.bin'))).size;
      expect(size).toBeLessThanOrEqual(TEST_LIMITS.diskQuotaBytes + 8 * 1024 * 1024);
      expect((await run('rm big.bin && echo removed')).output).toContain('removed');
      const many = await run('for i in $(seq 1 40); do head -c 3000000 /dev/zero > f$i.bin || break; done; sleep 1', { timeoutMs: 20_000 });
      expect(many.limitHit).toBe('disk');
    }, 40_000);

    it('snapshots, is destroyed and comes back intact from the snapshot', async () => {
      await run('mkdir -p a/b && echo hello > a/b/c.txt && printf "#!/bin/sh\\n" > run.sh && chmod 755 run.sh && ln -s a/b/c.txt link');
      const archive = await collect(provider.snapshot(task, { maxBytes: 10_000_000, timeoutMs: 5000 }));
      await provider.destroy(task);
      expect(await provider.exists(task)).toBe(false);
      await provider.restore(task, Readable.from([archive]), { maxBytes: 10_000_000, timeoutMs: 5000 });
      const check = await run('cat a/b/c.txt && stat -c %a run.sh && readlink link && touch new.txt && echo writable');
      expect(check.output).toBe('hello\n755\na/b/c.txt\nwritable\n');
    });

    it('snapshots a new workspace and restores it as it was: downloads/ alone, still writable', async () => {
      const archive = await collect(provider.snapshot(task, { maxBytes: 10_000_000, timeoutMs: 5000 }));
      await provider.destroy(task);
      await provider.restore(task, Readable.from([archive]), { maxBytes: 10_000_000, timeoutMs: 5000 });
      expect((await run('ls -A; touch new.txt downloads/new.txt && echo writable')).output).toBe('downloads\nwritable\n');
    });

    it('restores a snapshot without downloads/ as it was, adding none', async () => {
      await run('rmdir downloads');
      const archive = await collect(provider.snapshot(task, { maxBytes: 10_000_000, timeoutMs: 5000 }));
      await provider.destroy(task);
      await provider.restore(task, Readable.from([archive]), { maxBytes: 10_000_000, timeoutMs: 5000 });
      expect((await run('ls -A | wc -l; touch new.txt && echo writable')).output).toBe('0\nwritable\n');
    });

    it('refuses a bad or oversized snapshot and leaves the workspace as it was', async () => {
      await run('echo keep > keep.txt');
      await expect(
        provider.restore(task, Readable.from([Buffer.from('not a tarball at all')]), { maxBytes: 1000, timeoutMs: 5000 }),
      ).rejects.toThrow();
      const big = await collect(provider.snapshot(task, { maxBytes: 10_000_000, timeoutMs: 5000 }));
      await expect(provider.restore(task, Readable.from([big]), { maxBytes: 10, timeoutMs: 5000 })).rejects.toThrow(/exceeds/);
      await expect(collect(provider.snapshot(task, { maxBytes: 10, timeoutMs: 5000 }))).rejects.toThrow(/exceeds 10 bytes/);
      expect(await readFile(join(provider.workspacePath(task), 'keep.txt'), 'utf8')).toBe('keep\n');
    });

    it('snapshots links as links and leaves out FIFOs and sockets, saying so, without waiting on them', async () => {
      await run(
        'mkdir -p downloads && echo kept > kept.txt && ln -s /etc downloads/etc && ln -s ../../.. climb && mkfifo pipe && ' +
          'python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\'sock\')"',
      );
      const skipped: string[] = [];
      const archive = await collect(
        provider.snapshot(task, { maxBytes: 10_000_000, timeoutMs: 5000, onSkipped: (path, why) => skipped.push(`${path}: ${why}`) }),
      );
      expect(skipped).toEqual(['pipe: a FIFO (named pipe)', 'sock: a socket']);
      // Not a byte of the host's /etc: the link itself is stored.
      expect(archive.length).toBeLessThan(20_000);
      await provider.destroy(task);
      await provider.restore(task, Readable.from([archive]), { maxBytes: 10_000_000, timeoutMs: 5000 });
      const check = await run('cat kept.txt; readlink downloads/etc climb; ls pipe sock 2>&1 | wc -l');
      expect(check.output).toBe('kept\n/etc\n../../..\n2\n');
    });

    it('stops a snapshot as soon as its signal fires', async () => {
      await run('echo x > x.txt');
      const controller = new AbortController();
      controller.abort();
      await expect(collect(provider.snapshot(task, { maxBytes: 10_000_000, timeoutMs: 5000, signal: controller.signal }))).rejects.toThrow(
        /in use again/,
      );
    });

    it('refuses an environment value holding a NUL, naming the variable and never the value', async () => {
      const result = await run('echo ran', { env: { TOKEN: 'secret-part\0rest' } });
      expect(result.exitCode).not.toBe(0);
      expect(result.output).toContain('the environment variable TOKEN holds a NUL character');
      expect(result.output).not.toMatch(/secret-part|rest|ran/);
    });

    it('destroy removes the workspace', async () => {
      await writeFile(join(provider.workspacePath(task), 'x'), 'x');
      await provider.destroy(task);
      expect(await provider.exists(task)).toBe(false);
    });
  });
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
