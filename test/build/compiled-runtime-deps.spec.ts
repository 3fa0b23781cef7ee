import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { compiledEntry } from '../support/compiled-entry';

// The compiled build (dist/, scripts/build-services.js) is what `npm start` and the containers
// (installed with `npm ci --omit=dev`) run; the `ats` command is not in it (libs/cli runs from its
// sources, libs/cli/bin/ats.js). Every module the build loads must therefore be a Node built-in, a
// file of the build itself, or a production dependency: a leftover path alias, a missing copied file
// or a devDependency (ts-node, typescript, jest...) would only fail at run time, in a deployment.

const ROOT = join(__dirname, '..', '..');
const DIST = join(ROOT, 'dist');
/** require("x"), require.resolve("x"), someRequire("x") (createRequire) and import("x"), as SWC emits them. */
const LOADS = /(?:\brequire|Require|\.resolve|\bimport)\(\s*["']([^"']+)["']/g;

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? jsFiles(join(dir, entry.name)) : /\.(js|cjs)$/.test(entry.name) ? [join(dir, entry.name)] : [],
  );
}

function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function resolvesInBuild(from: string, specifier: string): boolean {
  const base = join(dirname(from), specifier);
  return [`${base}.js`, `${base}.json`, join(base, 'index.js'), base].some((path) => existsSync(path) && !statSync(path).isDirectory());
}

describe('the compiled build', () => {
  const entries = ['services/standalone/src/main.ts', 'services/api/src/main.ts'].map(compiledEntry);
  const files = [...jsFiles(join(DIST, 'services')), ...jsFiles(join(DIST, 'libs'))];
  const loads = files.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(LOADS)].map((match) => ({ file, specifier: match[1] })));

  it('has the entry points and compiles every source it found', () => {
    for (const entry of entries) expect(existsSync(entry)).toBe(true);
    expect(files.length).toBeGreaterThan(200);
    expect(loads.length).toBeGreaterThan(files.length);
  });

  it('loads packages only from production dependencies or Node itself', () => {
    const { dependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const builtins = new Set(builtinModules);
    const outside = loads
      .filter(({ specifier }) => !specifier.startsWith('.') && !specifier.startsWith('node:') && !builtins.has(packageOf(specifier)))
      .filter(({ specifier }) => !(packageOf(specifier) in dependencies))
      .map(({ file, specifier }) => `${relative(ROOT, file)}: ${specifier}`);
    expect(outside).toEqual([]);
  });

  it('finds every relative module it loads inside the build (no path alias left, no file missing)', () => {
    const aliases = loads.filter(({ specifier }) => specifier.startsWith('@app/') || specifier.startsWith('@agentic-task-service/'));
    expect(aliases).toEqual([]);
    const missing = loads
      .filter(({ file, specifier }) => specifier.startsWith('.') && !resolvesInBuild(file, specifier))
      .map(({ file, specifier }) => `${relative(ROOT, file)}: ${specifier}`);
    expect(missing).toEqual([]);
  });
});
