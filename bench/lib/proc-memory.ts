import { readFile } from 'node:fs/promises';

/** A process's VmRSS and VmHWM from /proc (Linux), MiB; undefined where there is no /proc entry for it. */
export async function procMemoryMiB(pid: number): Promise<{ rssMiB: number; peakMiB: number } | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  if (status === undefined) return undefined;
  const mib = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
    return Math.round(Number(match[1]) / 1024);
  };
  return { rssMiB: mib('VmRSS'), peakMiB: mib('VmHWM') };
}
