import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { SETTINGS_CATALOG } from '../../libs/common/src/config/settings-catalog';
import { configurationPage } from './configuration-page';
import type { EnvironmentRead } from './environment-reads';
import { environmentReads } from './environment-reads';

// docs/operations/configuration.md is rendered from the settings catalog, and the catalog is held
// to the code: every variable the services and libraries read has a row, every row is read
// somewhere, and where an integer reader spells out its fallback the documented default is it. A
// new setting without docs, or docs of a setting nobody reads any more, fails here.

const ROOT = join(__dirname, '..', '..');
const PAGE = join(ROOT, 'docs', 'operations', 'configuration.md');

/** Names the code reads that are no settings of ours, each with why. */
const NOT_SETTINGS: Record<string, string> = {
  PATH: "the host's search path, handed on to a stdio MCP server as the operating system set it",
  TERM: "the terminal's own description: `ats` draws nothing animated on a `dumb` one",
  CI: 'set by CI systems, whose terminals nobody watches: `ats` shows no spinner there',
};
// Left out by the walk itself, not listed above: the proxy variables (HTTP_PROXY, …) the sandbox
// sets for the commands it runs (services/sandbox/src/egress/sandbox-forwarder.ts), which are
// written, never read; and what only tests read (CONSOLE_SCREENSHOTS_DIR, …): specs, testing/
// helpers and test/ folders are no part of a process.

const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'generated', 'test', 'testing']);
const NOT_PRODUCTION = /\.(spec|int-spec|e2e-spec|server-spec)\.ts$|\.d\.ts$/;

function sourceFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : sourceFiles(path);
    return entry.isFile() && path.endsWith('.ts') && !NOT_PRODUCTION.test(path) ? [path] : [];
  });
}

const READS: EnvironmentRead[] = ['services', 'libs'].flatMap((folder) =>
  sourceFiles(join(ROOT, folder)).flatMap((file) =>
    environmentReads(relative(ROOT, file).split(sep).join('/'), readFileSync(file, 'utf8')),
  ),
);
const CATALOGED = new Map(
  SETTINGS_CATALOG.flatMap((setting) =>
    setting.names.map(
      (name, i) => [name, setting.defaults.length === setting.names.length ? setting.defaults[i] : setting.defaults[0]] as const,
    ),
  ),
);

describe('the configuration reference', () => {
  it('is the page the catalog renders', () => {
    if (readFileSync(PAGE, 'utf8') !== configurationPage()) {
      throw new Error('docs/operations/configuration.md differs from what the settings catalog renders: run `npm run docs:config`');
    }
  });

  it('lists every environment variable the code reads', () => {
    expect(READS.length).toBeGreaterThan(100);
    const undocumented = READS.filter(({ name }) => !CATALOGED.has(name) && !(name in NOT_SETTINGS)).map(
      ({ name, where }) => `${name} (${where}): add it to libs/common/src/config/settings-catalog.ts`,
    );
    expect(undocumented).toEqual([]);
  });

  it('lists only variables the code reads', () => {
    const read = new Set(READS.map(({ name }) => name));
    const unread = [...CATALOGED.keys()].filter((name) => !read.has(name)).map((name) => `${name}: in the catalog, read by no code`);
    expect(unread).toEqual([]);
  });

  it("documents each integer's default as its reader's fallback", () => {
    const disagreeing = READS.flatMap(({ name, where, intFallback }) => {
      const documented = CATALOGED.get(name);
      if (intFallback === undefined || documented === undefined) return [];
      // An integer default is documented as itself; a word (none, unlimited) stands for the
      // reader's 0, which the code takes as unset.
      const number = /^`(\d+)`/.exec(documented)?.[1];
      const agrees = number === undefined ? intFallback === 0 : Number(number) === intFallback;
      return agrees ? [] : [`${name} (${where}): the code falls back to ${intFallback}, the catalog says ${documented}`];
    });
    expect(disagreeing).toEqual([]);
  });

  it('reads the fallbacks of the integer settings, so that the check above checks something', () => {
    const checked = new Set(READS.filter((read) => read.intFallback !== undefined).map(({ name }) => name));
    expect(checked.size).toBeGreaterThanOrEqual(45);
  });
});
