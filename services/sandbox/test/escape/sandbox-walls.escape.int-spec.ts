import { stat } from 'node:fs/promises';
import type { Server } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { SYSCALL_TABLES } from '../../src/provider/bubblewrap/seccomp/denied-syscalls';
import type { EscapeFixture } from './escape-fixture';
import { CANARIES, startEscapeFixture } from './escape-fixture';

// Sandbox escape suite, part 2: what a command run in the sandbox can reach, change or take.
// The fixture's DATA_DIR sits below a private (0700) folder, so every attempt here also shows
// the shell works there. Part 1 (service-reads.escape.int-spec.ts) holds attempts 01–17.

jest.setTimeout(60_000);

const table = SYSCALL_TABLES[process.arch];

/** A Python one-liner calling syscall `nr` with `args`, printing "name r=<result> errno=<errno>". */
function syscallProbe(calls: Record<string, { nr: number; args: string }>): string {
  const lines = Object.entries(calls).map(
    ([name, { nr, args }]) =>
      `ctypes.set_errno(0); r = libc.syscall(${nr}, ${args}); print("${name} r=%d errno=%d" % (r, ctypes.get_errno()))`,
  );
  return `python3 - <<'EOF'\nimport ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nbuf = ctypes.create_string_buffer(256)\n${lines.join('\n')}\nEOF`;
}

describe('escape suite, part 2: the walls of the sandbox', () => {
  let f: EscapeFixture;
  beforeAll(async () => (f = await startEscapeFixture()));
  afterAll(async () => f.close());

  it("18. reading the host's files, the service's data or another task's workspace: none of them is there", async () => {
    const result = await f.run(
      `cat /etc/shadow; ls /root /home /var /run; cat ${f.hostDir}/canary.txt; cat ${f.dataDir}/eventstore/canary; ` +
        `cat ${f.dataDir}/workspaces/${f.other}/secret.txt; cat /workspace/../workspaces/${f.other}/secret.txt; echo END`,
    );
    for (const canary of CANARIES) expect(result.output).not.toContain(canary);
    expect(result.output).not.toMatch(/^root:[^:]*:\d+:/m);
    expect(result.output).toContain('No such file or directory');
    expect(result.output).toContain('END');
  });

  it("19. /proc/1 (bwrap's reaper): the task's own uid with no capability, no host path, task id or task value in its command line or environment; kill -9 does nothing to it", async () => {
    const result = await f.run(
      'tr "\\0" " " < /proc/1/cmdline; echo; tr "\\0" " " < /proc/1/environ; echo; grep -E "^(Uid|CapEff)" /proc/1/status; kill -9 1; echo "kill-rc=$?"; ls /proc | grep -cE "^[0-9]+$"',
      { env: { GIVEN: 'task-value-5e1f' } },
    );
    const [cmdline, environ, uid, caps] = result.output.split('\n');
    const owner = f.provider.fileOwner(f.task);
    expect(cmdline).toMatch(/^\/usr\/bin\/bwrap --args 3 -- \/bin\/bash -lc /);
    expect(cmdline).not.toContain(f.dataDir);
    expect(cmdline).not.toContain(f.task);
    // The launchers' fixed environment: the task's variables reach only what runs inside.
    expect(environ).toBe('PATH=/usr/bin:/bin LANG=C.UTF-8 ');
    expect(uid).toBe(`Uid:\t${owner.uid}\t${owner.uid}\t${owner.uid}\t${owner.uid}`);
    expect(caps).toMatch(/^CapEff:\s+0{16}$/);
    // A namespace's init ignores signals from inside it: the command goes on.
    expect(result.output).toContain('kill-rc=0');
    expect(Number(result.output.trim().split('\n').at(-1))).toBeLessThan(10);
  });

  it('20. writing to /, /etc, /usr or /dev: all read-only', async () => {
    const result = await f.run('for p in /x /etc/x /usr/x /dev/x /proc/x; do touch $p 2>&1; done; mkdir /newdir 2>&1; echo END');
    expect(result.output.match(/Read-only file system/g)?.length).toBeGreaterThanOrEqual(5);
    expect(result.output).toContain('END');
  });

  // Many files, each under the per-file limit (RLIMIT_FSIZE), so only the folder's own bound can stop them.
  const fill = (dir: string) => `for i in $(seq 1 25); do head -c 40000000 /dev/zero > ${dir}/f$i || break; done; du -sm ${dir} | cut -f1`;

  it('21. filling /dev/shm (host memory) with many files: stopped at 64 MiB', async () => {
    const result = await f.run(fill('/dev/shm'), { timeoutMs: 20_000 });
    expect(result.output).toMatch(/No space left on device/);
    expect(Number(result.output.trim().split('\n').at(-1))).toBeLessThanOrEqual(64);
  }, 30_000);

  it('22. filling /tmp (host memory) with many files: stopped at its bound', async () => {
    const result = await f.run(fill('/tmp'), { timeoutMs: 20_000 });
    expect(result.output).toMatch(/No space left on device/);
    expect(Number(result.output.trim().split('\n').at(-1))).toBeLessThanOrEqual(512);
  }, 30_000);

  it('23. a nested user namespace (unshare -r, uid 0 inside): refused', async () => {
    const result = await f.run('unshare -r id; echo "rc=$?"; unshare -m true; echo "rc=$?"');
    expect(result.output).toContain('Operation not permitted');
    expect(result.output).not.toContain('uid=0');
    expect(result.output.match(/rc=1/g)).toHaveLength(2);
  });

  it('24. mounting, also through the setuid mount and su binaries: refused, the uid never changes', async () => {
    const result = await f.run('mount -t tmpfs none /tmp 2>&1; echo x | su -c id root 2>&1; id -u; grep NoNewPrivs /proc/self/status');
    expect(result.output).toMatch(/must be superuser|Operation not permitted|permission denied/i);
    expect(result.output).toContain(String(f.provider.fileOwner(f.task).uid));
    expect(result.output).toMatch(/NoNewPrivs:\s+1/);
    expect(result.output).not.toMatch(/uid=0/);
  });

  it('25. tracing a process (strace, ptrace): refused', async () => {
    const result = await f.run('strace -f true 2>&1 | head -3; echo END');
    expect(result.output).toMatch(/Operation not permitted/);
  });

  it('26. syscalls an agent never needs and that would succeed unprivileged (keyrings, new namespaces, kcmp, io_uring, userfaultfd): EPERM from the filter', async () => {
    if (!table) throw new Error(`no syscall table for ${process.arch}`);
    const d = table.denied;
    const result = await f.run(
      syscallProbe({
        unshare_user: { nr: d.unshare as number, args: '0x10000000' },
        add_key: { nr: d.add_key as number, args: 'b"user", b"k", b"v", 1, -2' },
        keyctl: { nr: d.keyctl as number, args: '0, -2, 0' },
        kcmp: { nr: d.kcmp as number, args: 'os.getpid(), os.getpid(), 0, 0, 0' },
        process_vm_readv: { nr: d.process_vm_readv as number, args: 'os.getpid(), 0, 0, 0, 0, 0' },
        io_uring_setup: { nr: d.io_uring_setup as number, args: '1, buf' },
        userfaultfd: { nr: d.userfaultfd as number, args: '1' },
        clone_newuser: { nr: table.clone, args: '0x10000000 | 17, 0, 0, 0, 0' },
        bpf: { nr: d.bpf as number, args: '0, buf, 0' },
      }),
    );
    const lines = result.output.trim().split('\n');
    expect(lines).toHaveLength(9);
    for (const line of lines) expect(line).toMatch(/ r=-1 errno=1$/);
  });

  it('27. clone3 (whose flags a filter cannot read) answers ENOSYS, and threads still work through clone', async () => {
    if (!table) throw new Error(`no syscall table for ${process.arch}`);
    const result = await f.run(
      `${syscallProbe({ clone3: { nr: table.clone3, args: '0, 0' } })}\npython3 -c "import threading; t = threading.Thread(target=print, args=('thread-ran',)); t.start(); t.join()"`,
    );
    expect(result.output).toBe('clone3 r=-1 errno=38\nthread-ran\n');
  });

  it('28. capabilities: none in any set', async () => {
    const result = await f.run('grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb)" /proc/self/status');
    const sets = result.output.trim().split('\n');
    expect(sets).toHaveLength(5);
    for (const line of sets) expect(line).toMatch(/:\s+0{16}$/);
  });

  it('29. a process left in the background does not outlive its command', async () => {
    await f.run('(sleep 30 &) ; nohup sleep 31 > /dev/null 2>&1 & setsid sleep 32 & echo started');
    const result = await f.run('ps -eo args | grep -c "^sleep 3[012]"');
    expect(result.output.trim()).toBe('0');
  });

  it('30. the host loopback (the API port, any local server) with the network off: unreachable', async () => {
    const server: Server = createServer((socket) => socket.end('HOST-SERVER\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const result = await f.run(`exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3; echo "rc=$?"`);
      expect(result.output).not.toContain('HOST-SERVER');
      expect(result.output).toMatch(/Connection refused|Network is unreachable|rc=1/);
    } finally {
      server.close();
    }
  });

  it('31. a fork bomb: held at the process limit, and the next command runs normally', async () => {
    const result = await f.run(':(){ :|:& };:; sleep 2', { timeoutMs: 3000 });
    expect(result.limitHit).toMatch(/processes|timeout/);
    // Whatever ended it, forks were refused at the limit (the cgroup counts them): without it the bomb only meets the clock.
    expect(result.limitMessage).toContain('SANDBOX_MAX_PROCESSES');
    await new Promise((r) => setTimeout(r, 500));
    expect((await f.run('echo still-fine')).output).toContain('still-fine');
  }, 20_000);

  it('32. DATA_DIR below a private (0700) folder: commands run, as the task uid, writing files the host sees as theirs', async () => {
    expect((await stat(f.base)).mode & 0o777).toBe(0o700);
    const result = await f.run('id -u; whoami; echo mine > mine.txt && cat mine.txt');
    const owner = f.provider.fileOwner(f.task);
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe(`${owner.uid}\nsandbox\nmine\n`);
    expect((await stat(join(f.provider.workspacePath(f.task), 'mine.txt'))).uid).toBe(owner.uid);
  });

  it('33. a NUL in an environment value (which would inject bwrap options): a clear error naming the variable, never its value', async () => {
    const result = await f.run('id', { env: { LD_EVIL: 'x\0--bind\0/\0/host', TOKEN: 'abc\0def' } });
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toMatch(/the environment variable (LD_EVIL|TOKEN) holds a NUL character/);
    expect(result.output).not.toContain('--bind');
    expect(result.output).not.toContain('def');
  });

  it('34. setuid programs: no mount point lets one gain privileges', async () => {
    const result = await f.run('grep -E " /(usr|workspace|tmp|dev/shm) " /proc/self/mountinfo | grep -vc nosuid');
    expect(result.output.trim()).toBe('0');
  });
});
