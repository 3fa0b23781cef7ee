import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

// The `ats` command as its own package (libs/cli), away from the repository: the CLI and the typed
// client it depends on are packed as `npm publish` would pack them, unpacked side by side (the CLI
// names the client `file:../client`), and installed with a fresh `npm ci` from the CLI's own
// package-lock.json. `npx ats --help` must then run from what was installed, with no build step,
// and the installed tree must hold nothing of the service's server side: no Nest, Temporal or SQLite.
//
// The install is offline (`--offline`: npm's cache only, never the network). The CLI's lockfile
// pins only versions that the repository's package-lock.json pins too (checked below), so the
// root `npm ci` has put every tarball in the cache. Like the root's, the CLI's lockfile leaves
// out the registry's tarball addresses; they are written into the copy from npm's configured
// registry, so npm finds each tarball in its cache by its integrity without asking the registry.

const REPO_ROOT = join(__dirname, '..', '..', '..');
const CLI_FOLDER = join(REPO_ROOT, 'libs', 'cli');
const SERVER_SIDE = /^(@nestjs\/|@temporalio\/|better-sqlite3$|sqlite3$|@electric-sql\/pglite$)/;
const run = promisify(execFile);

interface LockEntry {
  readonly version?: string;
  readonly integrity?: string;
  readonly resolved?: string;
  readonly link?: boolean;
}
interface Lockfile {
  readonly packages: Record<string, LockEntry>;
}

const packageName = (lockPath: string) => lockPath.slice(lockPath.lastIndexOf('node_modules/') + 'node_modules/'.length);

async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, 'utf8')) as T;
}

/** Packs a folder of the repository and unpacks the package into `into`. */
async function packInto(folder: string, into: string, work: string): Promise<void> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work, folder], { cwd: work });
  const [{ filename }] = JSON.parse(stdout) as { filename: string }[];
  await mkdir(into);
  await run('tar', ['-xzf', join(work, filename), '-C', into, '--strip-components=1']);
}

describe('the ats package', () => {
  let work: string;
  let cli: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'ats-package-'));
    cli = join(work, 'cli');
    await packInto(join(REPO_ROOT, 'libs', 'client'), join(work, 'client'), work);
    await packInto(CLI_FOLDER, cli, work);
    // A clone where the client was built for publishing (npm run build --prefix libs/client) packs its
    // dist/ too: removed, so the command is shown to run from the client's sources alone.
    await rm(join(work, 'client', 'dist'), { recursive: true, force: true });

    const lock = await readJson<Lockfile>(join(CLI_FOLDER, 'package-lock.json'));
    const registry = (await run('npm', ['config', 'get', 'registry'], { cwd: work })).stdout.trim().replace(/\/?$/, '/');
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (!path || entry.resolved || entry.link) continue;
      const name = packageName(path);
      (entry as { resolved: string }).resolved = `${registry}${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
    }
    await writeFile(join(cli, 'package-lock.json'), JSON.stringify(lock, null, 2));
    // install-links (libs/cli/.npmrc, which npm never packs): the client is installed as a copy of its
    // package with its own dependencies, as from a registry, not as a symlink.
    await run('npm', ['ci', '--offline', '--install-links', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: cli });
  }, 180_000);

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('pins in its lockfile only packages the repository installs too (so its install can be offline)', async () => {
    const root = await readJson<Lockfile>(join(REPO_ROOT, 'package-lock.json'));
    const inRoot = new Set(Object.entries(root.packages).map(([path, e]) => `${packageName(path)}@${e.version} ${e.integrity}`));
    const own = await readJson<Lockfile>(join(CLI_FOLDER, 'package-lock.json'));
    const missing = Object.entries(own.packages)
      .filter(([path, entry]) => path && entry.integrity)
      .map(([path, entry]) => `${packageName(path)}@${entry.version} ${entry.integrity}`)
      .filter((id) => !inRoot.has(id));
    expect(missing).toEqual([]);
  });

  /** `npx ats …` in the unpacked CLI, its compiled files kept under the test's folder. */
  const ats = (args: string[]) =>
    run('npx', ['--offline', 'ats', ...args], { cwd: cli, env: { ...process.env, XDG_CACHE_HOME: join(work, 'cache') } });

  it('runs `npx ats --help` after a fresh `npm ci`, with no build', async () => {
    const { stdout } = await ats(['--help']);
    expect(stdout).toMatch(/^Usage: ats \[options\] \[command\]/);
    expect(stdout).toContain('run [options] <message>');
    const version = await ats(['--version']);
    expect(version.stdout.trim()).toBe((await readJson<{ version: string }>(join(CLI_FOLDER, 'package.json'))).version);
  });

  it('keeps the compiled files for the user only, and compiles a source again once it changed', async () => {
    const cache = join(work, 'cache', 'ats', 'compiled');
    expect((await stat(cache)).mode & 0o777).toBe(0o700);
    expect((await readdir(cache)).length).toBeGreaterThan(20);
    const program = join(cli, 'src', 'program.ts');
    const source = await readFile(program, 'utf8');
    await writeFile(program, source.replace('Run and follow tasks of the agentic task service', 'Edited since the last command'));
    try {
      expect((await ats(['--help'])).stdout).toContain('Edited since the last command');
    } finally {
      await writeFile(program, source);
    }
    expect((await ats(['--help'])).stdout).toContain('Run and follow tasks of the agentic task service');
  });

  it('runs a kept file only if no one else could have written it', async () => {
    const kept = join(
      work,
      'cache',
      'ats',
      'compiled',
      `${createHash('sha256')
        .update(join(cli, 'src', 'main.ts'))
        .digest('hex')}.js`,
    );
    const original = await readFile(kept, 'utf8');
    // Code of someone else's, ending with the right stamp (anyone can compute it from the source).
    await writeFile(kept, `console.log('PLANTED'); process.exit(0);\n${original}`);
    try {
      await chmod(kept, 0o600);
      expect((await ats(['--help'])).stdout).toBe('PLANTED\n'); // the cache is used: the check below is what refuses it
      await chmod(kept, 0o646);
      expect((await ats(['--help'])).stdout).toMatch(/^Usage: ats/);
    } finally {
      await writeFile(kept, original, { mode: 0o600 });
      await chmod(kept, 0o600);
    }
  });

  it('installs nothing of the server side (Nest, Temporal, SQLite): only the client and small packages', async () => {
    const { stdout } = await run('npm', ['ls', '--all', '--json', '--offline', '--install-links'], {
      cwd: cli,
      maxBuffer: 16 * 1024 * 1024,
    });
    interface Tree {
      readonly dependencies?: Record<string, Tree>;
    }
    const names = (tree: Tree): string[] => Object.entries(tree.dependencies ?? {}).flatMap(([name, sub]) => [name, ...names(sub)]);
    const installed = [...new Set(names(JSON.parse(stdout) as Tree))].sort();
    expect(installed).toEqual(expect.arrayContaining(['@agentic-task-service/client', 'commander', 'openapi-fetch', 'sucrase']));
    expect(installed.filter((name) => SERVER_SIDE.test(name))).toEqual([]);
  });
});
