import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
let built = false;

/**
 * The compiled form of a service entry point given as its source path (services/api/src/main.ts
 * becomes dist/services/api/src/main.js), built first when stale (with the workflow bundle), as `npm start` does: tests and
 * benchmarks run the code a deployment runs. The staleness check runs once per process (a
 * directory walk); concurrent builds from parallel workers are safe (scripts/build-services.js).
 */
export function compiledEntry(sourcePath: string): string {
  if (!built) {
    // Builds dist/ when stale, then the Temporal workflow bundle the workers load (orchestrator, api; once per change).
    execFileSync(process.execPath, [join(ROOT, 'scripts/bundle-workflows.js')], { cwd: ROOT, stdio: 'inherit', timeout: 180_000 });
    built = true;
  }
  return join(ROOT, 'dist', sourcePath.replace(/\.ts$/, '.js'));
}
