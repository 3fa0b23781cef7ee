import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FanotifyHints } from './fanotify-hints';
import { builtFswatch, mountLoopImage } from './testing/loop-image';

describe('FanotifyHints (native/ats-fswatch on a real ext4 loop image)', () => {
  let dir: string;
  let image: Awaited<ReturnType<typeof mountLoopImage>>;
  let hints: FanotifyHints;
  let binary: string;
  const ws = (...parts: string[]) => join(image.mountpoint, ...parts);
  const drained = async () => {
    const answer = await hints.drain('task_a');
    if (answer === 'rescan') return 'rescan';
    const names = [...(answer.names ?? new Map<string, ReadonlySet<string>>())].flatMap(([folder, inside]) =>
      [...inside].map((name) => `${folder}:${name}`),
    );
    return { touched: [...answer.touched].sort(), subtrees: [...answer.subtrees].sort(), names: names.sort() };
  };

  beforeAll(() => {
    binary = builtFswatch();
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fswatch-'));
    image = await mountLoopImage(dir);
    hints = new FanotifyHints(binary);
  });
  afterEach(async () => {
    await hints.close();
    await image.unmount().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('says rescan first, then exactly the folders touched, with made and moved folders as subtrees', async () => {
    mkdirSync(ws('a', 'b'), { recursive: true });
    writeFileSync(ws('a', 'f'), 'one');
    await hints.watch('task_a', image.mountpoint);
    expect(await drained()).toBe('rescan');
    expect(await drained()).toEqual({ touched: [], subtrees: [], names: [] });

    writeFileSync(ws('a', 'f'), 'two');
    expect(await drained()).toEqual({ touched: ['a'], subtrees: [], names: ['a:f'] });

    mkdirSync(ws('new'));
    writeFileSync(ws('new', 'x\ny'), 'odd name');
    renameSync(ws('a', 'b'), ws('moved'));
    symlinkSync('/etc/passwd', ws('a', 'link'));
    expect(await drained()).toEqual({
      touched: ['', 'a', 'new'],
      subtrees: ['a/b', 'moved', 'new'],
      names: [':moved', ':new', 'a:b', 'a:link', 'new:x\ny'],
    });

    // A folder's own mode lives in its parent's listing.
    chmodSync(ws('moved'), 0o700);
    expect(await drained()).toEqual({ touched: [''], subtrees: [], names: [':moved'] });
    // The top's own mode is no entry of any folder: it is re-listed whole.
    chmodSync(image.mountpoint, 0o750);
    expect(await drained()).toEqual({ touched: [''], subtrees: [], names: [] });
  });

  it('says rescan when a touched folder is gone before the drain', async () => {
    await hints.watch('task_a', image.mountpoint);
    await drained();
    mkdirSync(ws('gone'));
    writeFileSync(ws('gone', 'x'), 'x');
    await drained();
    unlinkSync(ws('gone', 'x'));
    rmSync(ws('gone'), { recursive: true });
    expect(await drained()).toBe('rescan');
    expect(await drained()).toEqual({ touched: [], subtrees: [], names: [] });
  });

  it('says rescan once after the helper died, and watches again', async () => {
    await hints.watch('task_a', image.mountpoint);
    await drained();
    const helper = execFileSync('pgrep', ['-P', String(process.pid), '-f', 'ats-fswatch'])
      .toString()
      .trim();
    process.kill(Number(helper.split('\n')[0]), 'SIGKILL');
    await new Promise((r) => setTimeout(r, 1100));
    writeFileSync(ws('after'), 'x');
    expect(await drained()).toBe('rescan');
    writeFileSync(ws('again'), 'x');
    expect(await drained()).toEqual({ touched: [''], subtrees: [], names: [':again'] });
  });

  it('refuses a folder that is not a filesystem mounted there: always rescan', async () => {
    mkdirSync(ws('sub'));
    await hints.watch('task_a', ws('sub'));
    expect(await drained()).toBe('rescan');
    writeFileSync(ws('sub', 'x'), 'x');
    expect(await drained()).toBe('rescan');
  });

  it('refuses a bind mount of a folder (marking it would mark the host filesystem under it)', async () => {
    const bind = join(dir, 'bind');
    mkdirSync(bind);
    execFileSync('mount', ['--bind', dir, bind]);
    try {
      await hints.watch('task_a', bind);
      expect(await drained()).toBe('rescan');
      writeFileSync(join(dir, 'x'), 'x');
      expect(await drained()).toBe('rescan');
    } finally {
      execFileSync('umount', [bind]);
    }
  });

  it('lets go of the mount on unwatch, so it unmounts without being busy', async () => {
    await hints.watch('task_a', image.mountpoint);
    expect(() => execFileSync('umount', [image.mountpoint], { stdio: 'pipe' })).toThrow(/busy/);
    await hints.unwatch('task_a');
    execFileSync('umount', [image.mountpoint]);
    expect(await hints.drain('task_a')).toBe('rescan');
  });
});
