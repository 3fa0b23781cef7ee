import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';

/** One built file of the web console, held in memory: the whole build is a few hundred KB. */
export interface ConsoleAsset {
  readonly body: Buffer;
  readonly type: string;
}

export interface ConsoleBuild {
  readonly index: Buffer;
  /** By file name under assets/ (content-hashed names, so each may be cached forever). */
  readonly assets: ReadonlyMap<string, ConsoleAsset>;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/**
 * Where `npm run build:console` writes the console (services/api/console/dist): found from this
 * file both when run by ts-node (services/api/src/console) and from a compiled dist/ tree.
 */
export function consoleBuildDir(): string | undefined {
  const candidates = [resolve(__dirname, '../../console/dist'), resolve(__dirname, '../../../../../services/api/console/dist')];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

/**
 * Reads the build once: a fixed set of names to serve, so no request path ever reaches the file
 * system (no traversal to guard against). Undefined when the console was not built.
 */
export async function loadConsoleBuild(dir = consoleBuildDir()): Promise<ConsoleBuild | undefined> {
  if (!dir || !existsSync(join(dir, 'index.html'))) return undefined;
  const assets = new Map<string, ConsoleAsset>();
  const assetsDir = join(dir, 'assets');
  const names = existsSync(assetsDir) ? await readdir(assetsDir) : [];
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (type) assets.set(name, { body: await readFile(join(assetsDir, name)), type });
  }
  return { index: await readFile(join(dir, 'index.html')), assets };
}
