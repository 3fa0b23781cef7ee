import { readFile } from 'node:fs/promises';

export interface MountEntry {
  /** The path within the mounted filesystem that is mounted (a bind mount's source folder). */
  readonly root: string;
  readonly mountPoint: string;
  readonly fsType: string;
  readonly source: string;
  /** The filesystem's own options (for a v1 cgroup hierarchy, its controllers). */
  readonly superOptions: readonly string[];
}

/** The mounts this process sees, from /proc/self/mountinfo (proc(5)). */
export async function readMountTable(): Promise<MountEntry[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-');
    if (dash < 6 || fields.length < dash + 3) continue;
    entries.push({
      root: unescape(fields[3]),
      mountPoint: unescape(fields[4]),
      fsType: fields[dash + 1],
      source: unescape(fields[dash + 2]),
      superOptions: (fields[dash + 3] ?? '').split(','),
    });
  }
  return entries;
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_match, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}
