import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeImage, mountBacking, unmountPoint } from '../../../provider/bubblewrap/host/workspace-mounts';
import { findFswatchBinary } from '../fanotify-hints';

/** An ext4 image as the provider makes one (workspace-mounts.ts), mounted through a loop device at `<dir>/mnt`. */
export async function mountLoopImage(dir: string, bytes = 256 * 1024 ** 2): Promise<{ mountpoint: string; unmount: () => Promise<void> }> {
  const image = join(dir, 'image');
  const mountpoint = join(dir, 'mnt');
  mkdirSync(mountpoint, { recursive: true });
  await makeImage(image, bytes, 0);
  await mountBacking(image, mountpoint);
  return {
    mountpoint,
    unmount: async () => {
      await unmountPoint(mountpoint, false);
      rmSync(image, { force: true });
    },
  };
}

/** The helper, built (or found up to date) by scripts/build-native.sh. */
export function builtFswatch(): string {
  execFileSync('bash', [resolve(__dirname, '../../../../../../scripts/build-native.sh')], { stdio: 'inherit' });
  const binary = findFswatchBinary();
  if (!binary) throw new Error('scripts/build-native.sh built no dist/native/ats-fswatch (is gcc installed?)');
  return binary;
}
