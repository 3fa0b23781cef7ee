import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * The node options `npm start` runs the all-in-one with (package.json's `start`: `node <options>
 * <entry>`, e.g. its V8 heap limit), so the tests and benchmarks that spawn the compiled entry run
 * it the way users do.
 */
export function startScriptNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [command, ...rest] = pkg.scripts.start.trim().split(/\s+/);
  if (command !== 'node') throw new Error(`package.json's start script does not begin with node: ${pkg.scripts.start}`);
  return rest.slice(0, -1).filter((arg) => arg.startsWith('--'));
}
