// Compiles services/*/src and libs/*/src (not tests, not test helpers under testing/, not bench,
// not the `ats` CLI) to JavaScript under dist/, mirroring the source tree (services/api/src/main.ts
// becomes dist/services/api/src/main.js), so the services run on plain Node: no TypeScript compiler
// or path-alias hook at run time. The CLI (libs/cli) is a package of its own that runs from its
// sources (libs/cli/bin/ats.js), so it is left out. SWC transpiles each file without type
// checking (`npm run typecheck` does that) in about a second; the `@app/...` aliases of
// tsconfig.json become relative paths here, at build time.
//
// Run as a script it builds only when stale (a source, package.json, tsconfig.json or this file
// is newer than the stamp of the last build), as build-console.js does for the console, so `npm
// start` on an unchanged tree costs one directory walk. `--force` rebuilds anyway. Writers racing
// (two test workers, two services starting) are safe: every file is written to a temporary name and
// renamed into place, so a reader sees a whole old or a whole new file, never half of one.
const { readdirSync, statSync, existsSync, mkdirSync, writeFileSync, renameSync, copyFileSync, rmSync, utimesSync } = require('node:fs');
const { dirname, join, relative } = require('node:path');

const ROOT = join(__dirname, '..');
const OUT_DIR = join(ROOT, 'dist');
const STAMP = join(OUT_DIR, '.build-stamp');
const SOURCE_PARENTS = ['services', 'libs'];
/** Source roots that are not part of the service build: the CLI package runs from its own sources. */
const NOT_BUILT = new Set([join(ROOT, 'libs', 'cli', 'src')]);
/** Files the build depends on besides the sources: a change to any of them rebuilds. */
const INPUTS = [join(ROOT, 'package.json'), join(ROOT, 'tsconfig.json'), __filename];
const SKIPPED_FILE = /\.(spec|int-spec|e2e-spec|server-spec)\.ts$|\.d\.ts$/;
const SKIPPED_DIR = new Set(['testing', 'node_modules', 'dist']);
/** Loaded at run time beside the compiled code (a child-process script, data files): copied as they are. */
const COPIED_FILE = /\.(js|cjs|json)$/;

/** Every `<services|libs>/<name>/src` folder: the compiled roots. */
function sourceRoots() {
  return SOURCE_PARENTS.flatMap((parent) =>
    readdirSync(join(ROOT, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, parent, entry.name, 'src')))
      .map((entry) => join(ROOT, parent, entry.name, 'src'))
      .filter((dir) => !NOT_BUILT.has(dir)),
  );
}

/** The files under dir the build compiles or copies, and the newest modification time seen (folders too: a deleted file moves its folder's). */
function walk(dir, files = [], newest = { ms: 0 }) {
  newest.ms = Math.max(newest.ms, statSync(dir).mtimeMs);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIR.has(entry.name)) walk(path, files, newest);
    } else if ((entry.name.endsWith('.ts') && !SKIPPED_FILE.test(entry.name)) || COPIED_FILE.test(entry.name)) {
      files.push(path);
      newest.ms = Math.max(newest.ms, statSync(path).mtimeMs);
    }
  }
  return { files, newest };
}

/** Where a source file's compiled (or copied) form goes. */
function outputPathOf(sourcePath) {
  return join(OUT_DIR, relative(ROOT, sourcePath)).replace(/\.ts$/, '.js');
}

/** The compiled entry point of a source file given relative to the repository root, e.g. services/api/src/main.ts. */
function compiledEntry(sourcePath) {
  return outputPathOf(join(ROOT, sourcePath));
}

function writeAtomically(path, contents) {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
}

/** SWC options matching tsconfig.json's emit: legacy decorators with design-type metadata (Nest DI, class-validator), ES2022 class fields, CommonJS. */
function swcOptions(filename) {
  const { compilerOptions } = require(join(ROOT, 'tsconfig.json'));
  return {
    filename,
    swcrc: false,
    configFile: false,
    sourceMaps: true,
    // The map names its source relative to itself and leaves the text out: dist/ stays movable
    // (a container image holds it without the sources) and small; stack traces need only lines.
    sourceFileName: relative(dirname(outputPathOf(filename)), filename),
    inlineSourcesContent: false,
    module: { type: 'commonjs' },
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      target: 'es2022',
      keepClassNames: true,
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
      baseUrl: ROOT,
      paths: compilerOptions.paths,
    },
  };
}

/** Compiles every source file and copies the rest; files whose source is gone are removed from the output. */
async function build() {
  const swc = require('@swc/core');
  const startedAt = new Date();
  const files = sourceRoots().flatMap((dir) => walk(dir).files);
  const outputs = new Set();
  await Promise.all(
    files.map(async (file) => {
      const out = outputPathOf(file);
      outputs.add(out);
      if (!file.endsWith('.ts')) {
        mkdirSync(dirname(out), { recursive: true });
        copyFileSync(file, `${out}.${process.pid}.tmp`);
        renameSync(`${out}.${process.pid}.tmp`, out);
        return;
      }
      const { code, map } = await swc.transformFile(file, swcOptions(file));
      outputs.add(`${out}.map`);
      writeAtomically(out, `${code}\n//# sourceMappingURL=${out.slice(dirname(out).length + 1)}.map\n`);
      writeAtomically(`${out}.map`, map);
    }),
  );
  removeOrphans(join(OUT_DIR, 'services'), outputs);
  removeOrphans(join(OUT_DIR, 'libs'), outputs);
  writeAtomically(STAMP, `${startedAt.toISOString()}\n`);
  // The stamp carries the build's start: a source saved while the build ran is newer, so the next run rebuilds.
  utimesSync(STAMP, startedAt, startedAt);
  return files.length;
}

function removeOrphans(dir, outputs) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) removeOrphans(path, outputs);
    else if (!outputs.has(path) && !entry.name.endsWith('.tmp')) rmSync(path, { force: true });
  }
}

/** True when no build exists or an input is newer than the last build's stamp. */
function isStale() {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  const newest = Math.max(...INPUTS.map((path) => statSync(path).mtimeMs), ...sourceRoots().map((dir) => walk(dir).newest.ms));
  return newest > built;
}

/** Builds when stale (or always with force); resolves to whether it built. */
async function buildIfStale({ force = false, quiet = false } = {}) {
  if (!force && !isStale()) return false;
  const started = Date.now();
  const count = await build();
  if (!quiet) console.error(`compiled ${count} files into dist/ in ${Date.now() - started} ms`);
  return true;
}

module.exports = { buildIfStale, compiledEntry, OUT_DIR };

if (require.main === module) {
  buildIfStale({ force: process.argv.includes('--force') }).catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
