import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointReader } from '@app/checkpoints';
import { LocalObjectStore } from '@app/object-store/local/local-object-store';
import type { TreeEntry } from '@app/task-domain';
import type { Baseline } from './baseline';
import type { Hints } from './change-hints';
import type { WrittenCheckpoint } from './checkpoint-writer';
import { writeCheckpoint } from './checkpoint-writer';
import { FanotifyHints } from './fanotify-hints';
import { builtFswatch, mountLoopImage } from './testing/loop-image';

/** A seeded generator (mulberry32): a failing run is replayed by its seed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Two baseline chains over one workspace: one told what changed by fanotify, one walking everything. */
describe('writeCheckpoint with hints (ats-fswatch on a real ext4 loop image) finds what a whole walk finds', () => {
  let dir: string;
  let image: Awaited<ReturnType<typeof mountLoopImage>>;
  let hints: FanotifyHints;
  let objects: LocalObjectStore;
  let binary: string;
  const chains = { hinted: undefined as Baseline | undefined, whole: undefined as Baseline | undefined };
  let seq = 0;
  let hintedSteps = 0;

  beforeAll(() => {
    binary = builtFswatch();
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ckpt-hints-'));
    image = await mountLoopImage(dir);
    objects = new LocalObjectStore(join(dir, 'objects'));
    hints = new FanotifyHints(binary);
    await hints.watch('task_h', image.mountpoint);
    chains.hinted = chains.whole = undefined;
    seq = hintedSteps = 0;
  });
  afterEach(async () => {
    await hints.close();
    await image.unmount().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  const write = (lineage: string, previous: Baseline | undefined, told?: Hints) =>
    writeCheckpoint(objects, image.mountpoint, previous, { taskId: lineage, lineage, seq, maxAddedBytes: 1024 ** 3, hints: told });

  /** Both chains checkpoint the workspace as it is now; what each says must be the same. */
  const step = async (): Promise<[WrittenCheckpoint, WrittenCheckpoint]> => {
    seq++;
    const told = await hints.drain('task_h');
    if (told !== 'rescan') hintedSteps++;
    const hinted = await write('task_h', chains.hinted, told === 'rescan' ? undefined : told);
    const whole = await write('task_w', chains.whole);
    chains.hinted = hinted.baseline;
    chains.whole = whole.baseline;
    expect(hinted.changes).toEqual(whole.changes);
    expect(hinted.ref.root.sha256).toBe(whole.ref.root.sha256);
    expect(hinted.ref.files).toBe(whole.ref.files);
    // What the next step compares against must be complete too.
    expect(sortedKeys(hinted.baseline.files)).toEqual(sortedKeys(whole.baseline.files));
    expect(sortedEntries(hinted.baseline.folderSizes)).toEqual(sortedEntries(whole.baseline.folderSizes));
    expect(sortedKeys(hinted.baseline.folders)).toEqual(sortedKeys(whole.baseline.folders));
    expect(sortedKeys(hinted.baseline.nodes)).toEqual(sortedKeys(whole.baseline.nodes));
    // Counted, not recomputed, by the hinted chain: each node named as many times as a walk finds.
    expect(sortedEntries(hinted.baseline.nodeRefs!)).toEqual(sortedEntries(whole.baseline.nodeRefs!));
    expect(sortedKeys(hinted.baseline.innerNodes)).toEqual(sortedKeys(whole.baseline.innerNodes));
    return [hinted, whole];
  };

  it('after each of 200 seeded random steps: the same changes, the same root, the same stored tree', async () => {
    const seed = Number(process.env.CKPT_HINTS_SEED ?? 20261128);
    const next = random(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const ws = (path: string) => join(image.mountpoint, path);
    const all = (kind: 'file' | 'dir' | 'any') => {
      const found: string[] = [];
      const visit = (rel: string) => {
        for (const name of readdirSync(ws(rel))) {
          const path = rel ? `${rel}/${name}` : name;
          const stats = lstatSync(ws(path));
          if (stats.isDirectory()) {
            if (kind !== 'file') found.push(path);
            visit(path);
          } else if (kind !== 'dir') found.push(path);
        }
      };
      visit('');
      return found;
    };
    const folder = () => pick(['', ...all('dir')]);
    const under = (parent: string, name: string) => (parent ? `${parent}/${name}` : name);
    const fresh = () => `n${Math.floor(next() * 1e6)}`;
    const ops: Record<string, () => void> = {
      create: () => writeFileSync(ws(under(folder(), `${fresh()}.txt`)), `made ${next()}`),
      modify: () => {
        const file = pick(all('file').filter((p) => !lstatSync(ws(p)).isSymbolicLink()));
        if (file) writeFileSync(ws(file), next() < 0.5 ? `same size ${Math.floor(next() * 10)}` : `changed to ${next()}`);
      },
      delete: () => {
        const file = pick(all('file'));
        if (file) rmSync(ws(file));
      },
      renameFile: () => {
        const file = pick(all('file'));
        if (file) renameSync(ws(file), ws(under(folder(), fresh())));
      },
      renameDir: () => {
        const from = pick(all('dir'));
        const to = under(folder(), fresh());
        if (from && !`${to}/`.startsWith(`${from}/`)) renameSync(ws(from), ws(to));
      },
      mkdirNested: () => {
        const top = under(folder(), fresh());
        mkdirSync(ws(`${top}/a/b`), { recursive: true });
        writeFileSync(ws(`${top}/a/b/deep.txt`), `deep ${next()}`);
      },
      rmdir: () => {
        const gone = pick(all('dir'));
        if (gone) rmSync(ws(gone), { recursive: true });
      },
      chmod: () => {
        const target = pick(all('any').filter((p) => !lstatSync(ws(p)).isSymbolicLink()));
        if (target) chmodSync(ws(target), lstatSync(ws(target)).isDirectory() ? pick([0o700, 0o755, 0o750]) : pick([0o600, 0o644, 0o755]));
      },
      symlink: () => symlinkSync(pick(['../x', '/etc/passwd', 'nowhere', fresh()]), ws(under(folder(), fresh()))),
      dirToFile: () => {
        const gone = pick(all('dir'));
        if (!gone) return;
        rmSync(ws(gone), { recursive: true });
        writeFileSync(ws(gone), 'was a folder');
      },
      // Folders swapped by name: both paths were folders before, so only the moves say their contents changed.
      swapDirs: () => {
        const [a, b] = [pick(all('dir')), pick(all('dir'))];
        if (!a || !b || `${a}/`.startsWith(`${b}/`) || `${b}/`.startsWith(`${a}/`)) return;
        const parked = under(folder(), fresh());
        if (`${parked}/`.startsWith(`${a}/`) || `${parked}/`.startsWith(`${b}/`)) return;
        renameSync(ws(a), ws(parked));
        renameSync(ws(b), ws(a));
        renameSync(ws(parked), ws(b));
      },
      // Big folders are tries of several nodes; empty ones, and the twins, share nodes the hinted chain counts.
      bigEdit: () => {
        const name = `f${Math.floor(next() * 180)}`;
        const twin = pick(['big', 'twin']);
        // Moved or removed by an earlier step: made again, empty.
        if (!existsSync(ws(twin))) mkdirSync(ws(twin));
        if (!lstatSync(ws(twin)).isDirectory()) return;
        const at = ws(`${twin}/${name}`);
        if (next() < 0.3 && existsSync(at)) rmSync(at);
        else writeFileSync(at, `big ${name} ${Math.floor(next() * 3)}`);
      },
      mkdirEmpty: () => mkdirSync(ws(under(folder(), fresh()))),
      fileToDir: () => {
        const file = pick(all('file'));
        if (!file) return;
        rmSync(ws(file));
        mkdirSync(ws(file));
        writeFileSync(ws(`${file}/inside`), 'was a file');
      },
    };
    // Creation weighs more, so the workspace grows and holds untouched folders to carry over.
    const weighted = [...Object.keys(ops), 'create', 'create', 'create', 'mkdirNested', 'modify', 'modify', 'bigEdit'];

    for (let d = 0; d < 8; d++) {
      mkdirSync(ws(`d${d}/sub`), { recursive: true });
      for (let f = 0; f < 5; f++) writeFileSync(ws(`d${d}/f${f}.txt`), `file ${d}/${f}`);
      writeFileSync(ws(`d${d}/sub/s.txt`), `sub ${d}`);
    }
    // Two folders of 150 names, the same to the byte and the time: their trie nodes are shared.
    for (const twin of ['big', 'twin']) {
      mkdirSync(ws(twin));
      for (let f = 0; f < 150; f++) {
        writeFileSync(ws(`${twin}/f${f}`), `big f${f} 0`);
        utimesSync(ws(`${twin}/f${f}`), 1_700_000_000, 1_700_000_000);
      }
    }
    await step();
    const reader = new CheckpointReader(objects);
    for (let i = 1; i <= 200; i++) {
      const count = 1 + Math.floor(next() * 4);
      const done: string[] = [];
      for (let n = 0; n < count; n++) {
        const op = pick(weighted);
        done.push(op);
        ops[op]!();
      }
      const [hinted, whole] = await step().catch((error: Error) => {
        throw new Error(`seed ${seed}, step ${i} (${done.join(', ')}): ${error.message}`);
      });
      if (i % 25 === 0) expect(await storedTree(reader, hinted)).toEqual(await storedTree(reader, whole));
    }
    // Most steps were told what changed (a removed folder holding files makes a step walk everything).
    expect(hintedSteps).toBeGreaterThan(100);
  });

  it('walks moved folders whole, also where a folder of the same name was (swapped folders)', async () => {
    const ws = (path: string) => join(image.mountpoint, path);
    for (const [top, name] of [
      ['x', 'from-x'],
      ['y', 'from-y'],
    ]) {
      mkdirSync(ws(`${top}/in/deeper`), { recursive: true });
      writeFileSync(ws(`${top}/in/deeper/${name}`), name);
    }
    await step();
    await step();
    renameSync(ws('x'), ws('parked'));
    renameSync(ws('y'), ws('x'));
    renameSync(ws('parked'), ws('y'));
    const [hinted] = await step();
    expect(hinted.changes.map((c) => `${c.change} ${c.path}`)).toEqual([
      'deleted x/in/deeper/from-x',
      'created x/in/deeper/from-y',
      'created y/in/deeper/from-x',
      'deleted y/in/deeper/from-y',
    ]);
    expect(hintedSteps).toBe(2);
  });

  it('leaves the baseline it took over as it was when a hinted checkpoint fails', async () => {
    const ws = (path: string) => join(image.mountpoint, path);
    mkdirSync(ws('aaa'));
    mkdirSync(ws('keep'));
    writeFileSync(ws('aaa/changed.txt'), 'before');
    writeFileSync(ws('aaa/gone.txt'), 'gone');
    writeFileSync(ws('keep/old.txt'), 'old');
    await step();
    await step();
    // Walked first (by name): taken in, then the failure comes in keep/.
    writeFileSync(ws('aaa/changed.txt'), 'after!');
    rmSync(ws('aaa/gone.txt'));
    rmSync(ws('keep/old.txt'));
    writeFileSync(ws('keep/big.bin'), Buffer.alloc(64 * 1024, 1));
    seq++;
    const told = await hints.drain('task_h');
    expect(told).not.toBe('rescan');
    const tooSmall = writeCheckpoint(objects, image.mountpoint, chains.hinted, {
      taskId: 'task_h',
      lineage: 'task_h',
      seq,
      maxAddedBytes: 1024,
      hints: told === 'rescan' ? undefined : told,
    });
    await expect(tooSmall).rejects.toThrow(/bytes one checkpoint may store/);
    // The same hints again, against the baseline the failed one had taken over.
    const hinted = await write('task_h', chains.hinted, told === 'rescan' ? undefined : told);
    const whole = await write('task_w', chains.whole);
    expect(hinted.changes).toEqual(whole.changes);
    expect(hinted.changes.map((c) => `${c.change} ${c.path}`)).toEqual([
      'modified aaa/changed.txt',
      'deleted aaa/gone.txt',
      'created keep/big.bin',
      'deleted keep/old.txt',
    ]);
    expect(hinted.ref.root.sha256).toBe(whole.ref.root.sha256);
  });

  it('walks everything again once a file has two links (a change through one name is seen only in its folder)', async () => {
    mkdirSync(join(image.mountpoint, 'a'));
    mkdirSync(join(image.mountpoint, 'b'));
    writeFileSync(join(image.mountpoint, 'a', 'one'), 'first');
    await step();
    await step();
    linkSync(join(image.mountpoint, 'a', 'one'), join(image.mountpoint, 'b', 'two'));
    await step();
    writeFileSync(join(image.mountpoint, 'b', 'two'), 'second!');
    const [hinted] = await step();
    expect(hinted.changes.map((c) => c.path)).toEqual(['a/one', 'b/two']);
  });
});

function sortedKeys(map: ReadonlyMap<string, unknown>): string[] {
  return [...map.keys()].sort();
}

function sortedEntries<T>(map: ReadonlyMap<string, T>): [string, T][] {
  return [...map.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
}

/** The checkpoint read back from the store, locations left out (each chain stores its own packs). */
async function storedTree(reader: CheckpointReader, written: WrittenCheckpoint): Promise<Omit<TreeEntry, 'at'>[]> {
  const root: TreeEntry = {
    name: '',
    kind: 'dir',
    mode: 0o755,
    size: 0,
    mtimeMs: 0,
    sha256: written.ref.root.sha256,
    at: written.ref.root.at,
  };
  const entries: Omit<TreeEntry, 'at'>[] = [];
  for await (const { path, entry } of reader.walk(root)) {
    const { at: _at, ...rest } = entry;
    entries.push({ ...rest, name: path });
  }
  return entries;
}
