import { execFileSync } from 'node:child_process';
import { readFile, readdir, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A process on the host, as /proc shows it to root. */
export interface HostProcess {
  readonly pid: number;
  readonly euid: number;
  /** Any effective capability (in whatever user namespace it lives). */
  readonly capable: boolean;
  /** Only where the process runs in the host's own user namespace are its uid 0 and capabilities the host's. */
  readonly inHostUserNamespace: boolean;
  readonly environ: Buffer;
  readonly cmdline: Buffer;
  readonly cwd: string;
}

/** Every process on the host, read as root; those that end meanwhile are left out. */
export async function hostProcesses(): Promise<HostProcess[]> {
  // This test process runs as root in the host's user namespace.
  const hostUserNs = await readlink('/proc/self/ns/user');
  const processes: HostProcess[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const dir = join('/proc', name);
    try {
      const status = await readFile(join(dir, 'status'), 'utf8');
      const euid = Number(/^Uid:\s+\d+\s+(\d+)/m.exec(status)?.[1]);
      const capEff = /^CapEff:\s+([0-9a-f]+)/m.exec(status)?.[1] ?? '0';
      processes.push({
        pid: Number(name),
        euid,
        capable: BigInt(`0x${capEff}`) !== 0n,
        inHostUserNamespace: (await readlink(join(dir, 'ns', 'user'))) === hostUserNs,
        environ: await readFile(join(dir, 'environ')),
        cmdline: await readFile(join(dir, 'cmdline')),
        cwd: await readlink(join(dir, 'cwd')).catch(() => ''),
      });
    } catch {
      // gone meanwhile, or a kernel thread
    }
  }
  return processes;
}

/** Holds host privilege: root or any capability, in the host's own user namespace. */
export const privileged = (p: HostProcess): boolean => p.inHostUserNamespace && (p.euid === 0 || p.capable);

/** Whether `text` appears in the process's environment, command line or working directory. */
export const holds = (p: HostProcess, text: string): boolean =>
  p.environ.includes(text) || p.cmdline.includes(text) || p.cwd.includes(text);

/**
 * A harmless preload library, as an attacker would plant one: every process that loads it says
 * (on stderr) which program it is in, its uids and effective capabilities, and whether it could
 * open the kernel's core_pattern tunable for writing (it never writes).
 */
const PRELOAD_SOURCE = `
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void report(void) {
  char caps[64] = "?", line[256], exe[256] = "?";
  FILE *status = fopen("/proc/self/status", "r");
  while (status && fgets(line, sizeof line, status))
    if (!strncmp(line, "CapEff:", 7)) sscanf(line + 7, "%63s", caps);
  if (status) fclose(status);
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) exe[n] = 0;
  int fd = open("/proc/sys/kernel/core_pattern", O_WRONLY);
  int error = fd < 0 ? errno : 0;
  if (fd >= 0) close(fd);
  dprintf(2, "PRELOAD-REPORT exe=%s uid=%d euid=%d caps=%s core_pattern=%s\\n", exe, (int)getuid(), (int)geteuid(), caps,
          fd >= 0 ? "opened-for-writing" : strerror(error));
}
`;

/** Compiles the preload library into `dir` and answers its path (gcc is installed by the test script). */
export async function buildPreloadLibrary(dir: string): Promise<string> {
  const source = join(dir, 'report.c');
  const library = join(dir, 'report.so');
  await writeFile(source, PRELOAD_SOURCE);
  execFileSync('gcc', ['-shared', '-fPIC', '-O1', '-o', library, source]);
  return library;
}

/** The lines the preload library wrote. */
export function preloadReports(output: string): { exe: string; uid: number; euid: number; caps: string; corePattern: string }[] {
  return [...output.matchAll(/^PRELOAD-REPORT exe=(\S+) uid=(\d+) euid=(\d+) caps=([0-9a-f?]+) core_pattern=(.*)$/gm)].map((m) => ({
    exe: m[1],
    uid: Number(m[2]),
    euid: Number(m[3]),
    caps: m[4],
    corePattern: m[5],
  }));
}
