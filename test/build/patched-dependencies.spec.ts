import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

// The dependencies patched under patches/ (docs/contributing.md "Patched dependencies"), applied
// by the root package's postinstall (patch-package) on every `npm ci`. An install that skipped it
// (`--ignore-scripts`, a Dockerfile that ran `npm ci` before copying patches/, a package upgraded
// past its patch) would run the unpatched code and fail only where the bug bites; this fails here.

const ROOT = join(__dirname, '..', '..');
const PATCHES = join(ROOT, 'patches');
const HOW_TO_FIX =
  'run `npx patch-package` at the repository root (or `npm ci`, whose postinstall runs it), and see docs/contributing.md "Patched dependencies"';

interface FilePatch {
  readonly file: string;
  readonly added: string[];
}

/** `@fastify+busboy+3.2.6.patch` → @fastify/busboy, 3.2.6 (patch-package's naming). */
function packageOfPatch(name: string): { name: string; version: string } {
  const parts = name.replace(/\.patch$/, '').split('+');
  return { name: parts.slice(0, -1).join('/'), version: parts[parts.length - 1] };
}

/** Every line the patch adds, by the file (relative to the package) it adds it to. */
function filePatches(patch: string): FilePatch[] {
  const files: FilePatch[] = [];
  for (const line of patch.split('\n')) {
    const target = /^\+\+\+ b\/node_modules\/(?:@[^/]+\/)?[^/]+\/(.+)$/.exec(line);
    if (target) files.push({ file: target[1], added: [] });
    else if (line.startsWith('+') && !line.startsWith('+++') && line.trim() !== '+') files.at(-1)?.added.push(line.slice(1));
  }
  return files;
}

describe('patched dependencies (patches/)', () => {
  const patches = readdirSync(PATCHES).filter((name) => name.endsWith('.patch'));

  it('has the @fastify/busboy patch', () => {
    expect(patches).toContain('@fastify+busboy+3.2.6.patch');
  });

  it.each(patches)('%s: the installed package is that version and holds every line the patch adds', (name) => {
    const { name: pkg, version } = packageOfPatch(name);
    const dir = join(ROOT, 'node_modules', pkg);
    const installed = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
    if (installed !== version)
      throw new Error(`patches/${name} is for ${pkg} ${version}, but ${installed} is installed: port the patch (${HOW_TO_FIX})`);
    const files = filePatches(readFileSync(join(PATCHES, name), 'utf8'));
    expect(files.length).toBeGreaterThan(0);
    for (const { file, added } of files) {
      const source = readFileSync(join(dir, file), 'utf8');
      const missing = added.filter((line) => !source.includes(line));
      if (missing.length > 0)
        throw new Error(`node_modules/${pkg}/${file} lacks patches/${name} (${missing.length} added lines missing): ${HOW_TO_FIX}`);
    }
  });

  it('patches the busboy that @fastify/multipart loads (no second, unpatched copy of its own)', () => {
    const multipart = dirname(require.resolve('@fastify/multipart/package.json', { paths: [ROOT] }));
    // patch-package patches node_modules/@fastify/busboy only; Node would load a copy nested in @fastify/multipart first.
    const nested = join(multipart, 'node_modules', '@fastify', 'busboy');
    expect(existsSync(nested) ? `${nested} (unpatched)` : 'the hoisted one').toBe('the hoisted one');
    const dicer = readFileSync(join(ROOT, 'node_modules', '@fastify', 'busboy', 'deps', 'dicer', 'lib', 'Dicer.js'), 'utf8');
    if (!dicer.includes("if (ev === 'finish') { this._unpause() }"))
      throw new Error(`@fastify/busboy's Dicer.js does not release its paused write on finish: ${HOW_TO_FIX}`);
  });
});
