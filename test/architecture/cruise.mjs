// Runs dependency-cruiser's API (`cruise`) with the repo's .dependency-cruiser.js and prints the
// violations as JSON, one result per tree given. layering.spec.ts starts it as a child process:
// dependency-cruiser is ESM only, which jest's CommonJS runtime cannot load.
//   node test/architecture/cruise.mjs <baseDir>...
// Each tree is cruised over its layered folders (services, libs, test, bench, scripts: those it has), the
// scope scripts/test.sh gives the CLI. A tree with a tsconfig.json (the repo root) resolves its path
// aliases with it; the fixture trees under test/architecture/fixtures import by relative paths.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const CONFIG = fileURLToPath(new URL('../../.dependency-cruiser.js', import.meta.url));
const LAYERED_FOLDERS = ['services', 'libs', 'test', 'bench', 'scripts'];

async function cruiseTree(baseDir) {
  const options = await extractDepcruiseOptions(CONFIG);
  const tsConfigFile = join(baseDir, 'tsconfig.json');
  const tsConfig = existsSync(tsConfigFile) ? extractTSConfig(tsConfigFile) : undefined;
  if (tsConfig) options.tsConfig = { fileName: tsConfigFile };
  else delete options.tsConfig;
  const folders = LAYERED_FOLDERS.filter((f) => existsSync(join(baseDir, f)));
  const { output } = await cruise(folders, { ...options, baseDir }, {}, { tsConfig });
  const violations = output.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
  return { modules: output.summary.totalCruised, violations };
}

const results = [];
for (const baseDir of process.argv.slice(2)) results.push(await cruiseTree(resolve(baseDir)));
process.stdout.write(JSON.stringify(results));
