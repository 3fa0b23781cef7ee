import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxConfig } from '../sandbox.config';
import { SandboxLimits } from '../sandbox-provider.port';
import { TEST_LIMITS, describeSandboxProviderContract, taskIdFor } from '../testing/sandbox-provider.contract';
import { BubblewrapProvider } from './bubblewrap.provider';

const config = (limits: SandboxLimits, network = false): SandboxConfig => ({ provider: 'bubblewrap', limits, network, uidBase: 200_000, uidCount: 50_000 });

describeSandboxProviderContract('bubblewrap', (dataDir, limits) => new BubblewrapProvider(config(limits), dataDir));

describe('bubblewrap escape attempts', () => {
  let dataDir: string;
  let provider: BubblewrapProvider;
  const task = taskIdFor(2);
  const other = taskIdFor(3);
  const run = (command: string, timeoutMs = 5000) => provider.exec(task, { command, env: { GIVEN: 'yes' }, timeoutMs });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ats-escape-'));
    provider = new BubblewrapProvider(config(TEST_LIMITS), dataDir);
    await mkdir(join(dataDir, 'eventstore'), { recursive: true });
    await writeFile(join(dataDir, 'eventstore', 'canary'), 'DATA-DIR-CANARY');
    await provider.create(task);
    await writeFile(join(await provider.create(other), 'secret.txt'), 'OTHER-TASK-CANARY');
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('cannot read host files, the service data or another task, which are not even there', async () => {
    const result = await run(
      `cat /etc/shadow; ls /root /home /work /var /run; cat ${dataDir}/eventstore/canary; cat ${dataDir}/workspaces/${other}/secret.txt; ` +
        `cat /workspace/../workspaces/${other}/secret.txt; ls -a /; echo END`,
    );
    expect(result.output).not.toContain('DATA-DIR-CANARY');
    expect(result.output).not.toContain('OTHER-TASK-CANARY');
    expect(result.output).not.toMatch(/root:[^:]*:\d+:/); // no shadow line
    expect(result.output).toContain('No such file or directory');
    const root = result.output.split('\n').filter((l) => /^[a-z0-9.]+$/.test(l));
    expect(root).not.toContain('root');
    expect(root).not.toContain('work');
    expect(result.output).toContain('END');
  });

  it('sees only its own processes in /proc, and only what it was given in its environment', async () => {
    const result = await run('ls /proc | grep -cE "^[0-9]+$"; cat /proc/1/cmdline | tr "\\0" " "; echo; env | sort');
    const [count] = result.output.split('\n');
    expect(Number(count)).toBeLessThan(10);
    expect(result.output).toContain('GIVEN=yes');
    expect(result.output).not.toContain('DATABASE_URL');
    expect(result.output).not.toContain('JEST_WORKER_ID');
    expect(result.output).not.toContain('API_KEYS');
  });

  it('runs as the task\'s own unprivileged user, whose files the host can hand over', async () => {
    const owner = provider.fileOwner(task);
    const result = await run('id -u; touch mine.txt; whoami');
    expect(result.output.split('\n').slice(0, 1)).toEqual([String(owner.uid)]);
    expect(result.output).toContain('sandbox');
    expect((await stat(join(provider.workspacePath(task), 'mine.txt'))).uid).toBe(owner.uid);
    expect(provider.fileOwner(other).uid).not.toBe(owner.uid);
  });

  it('cannot reach a server on the host loopback when the network is off', async () => {
    const server: Server = createServer((socket) => socket.end('HOST-SERVER\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const result = await run(`exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3; echo "rc=$?"`);
      expect(result.output).not.toContain('HOST-SERVER');
      expect(result.output).toMatch(/Connection refused|Network is unreachable|rc=1/);
    } finally {
      server.close();
    }
  });

  it('reaches the host loopback only when the network is allowed', async () => {
    const open = new BubblewrapProvider(config(TEST_LIMITS, true), dataDir);
    const server: Server = createServer((socket) => socket.end('HOST-SERVER\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const result = await open.exec(task, { command: `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`, env: {}, timeoutMs: 5000 });
      expect(result.output).toContain('HOST-SERVER');
    } finally {
      server.close();
    }
  });

  it('stops a fork bomb and the machine is fine afterwards', async () => {
    // The trailing sleep keeps the bomb's shell alive: its exit alone would end the namespace.
    const result = await run(':(){ :|:& };:; sleep 2', 3000);
    expect(result.limitHit).toMatch(/processes|timeout/);
    expect(result.limitMessage).toMatch(/SANDBOX_MAX_PROCESSES|SANDBOX_TIMEOUT_MS/);
    await new Promise((r) => setTimeout(r, 500));
    expect((await run('echo still-fine')).output).toContain('still-fine');
  }, 20_000);

  it('cannot write outside the workspace, and /tmp is private and bounded', async () => {
    const result = await run('touch /usr/x; touch /etc/x; echo hi > /tmp/t && cat /tmp/t; head -c 900000000 /dev/zero > /tmp/big; echo "tmp-rc=$?"');
    expect(result.output).toContain('Read-only file system');
    expect(result.output).toContain('hi');
    expect(result.output).toMatch(/tmp-rc=[1-9]/);
  }, 20_000);

  it('reports a CPU limit and a memory limit', async () => {
    const limits = { ...TEST_LIMITS, cpuSeconds: 1, timeoutMs: 10_000, memoryBytes: 256 * 1024 * 1024 };
    const tight = new BubblewrapProvider(config(limits), dataDir);
    const cpu = await tight.exec(task, { command: 'while true; do :; done', env: {} });
    expect(cpu.limitHit).toBe('cpu');
    const memory = await tight.exec(task, { command: 'python3 -c "x = bytearray(512 * 1024 * 1024)"', env: {} });
    expect(memory.limitHit).toBe('memory');
  }, 30_000);
});

describe('bubblewrap providers sharing one volume (sandbox instances of a cluster)', () => {
  it('check only ever touches a probe workspace of its own, so instances can check at the same time', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ats-shared-volume-'));
    try {
      const providers = [1, 2, 3].map(() => new BubblewrapProvider(config(TEST_LIMITS), dataDir));
      // Workspaces already on the volume (another instance's probe mid-check, tasks) must survive.
      const others = ['task_00000000000000000000000000000000', taskIdFor(7)];
      for (const id of others) await writeFile(join(await providers[0].create(id), 'mark'), 'x');
      const health = await Promise.all(providers.map((p) => p.check()));
      expect(health.map((h) => h.ok)).toEqual([true, true, true]);
      for (const id of others) await expect(stat(join(dataDir, 'workspaces', id, 'mark'))).resolves.toBeTruthy();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
