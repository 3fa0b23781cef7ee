import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

// The layering the folder tree promises, checked on every import (STYLE.md rule 24).

const ROOT = join(__dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !/\.(spec|int-spec|e2e-spec)\.ts$/.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath ?? (e as unknown as { path: string }).path, e.name)))
    .filter((f) => !f.includes('/testing/'));
}

function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]);
}

function violations(dir: string, forbidden: (specifier: string) => boolean): string[] {
  const files = sourceFiles(dir);
  if (files.length === 0) throw new Error(`no source files under ${dir}: the check would prove nothing`);
  return files.flatMap((file) => importsOf(file).filter(forbidden).map((s) => `${file} imports ${s}`));
}

describe('layering', () => {
  it('keeps the task domain pure: no Node, no Nest, no adapters', () => {
    // mvdan-sh is a pure parser (no I/O): the approval rules read shell commands with it.
    const allowed = (s: string) => s.startsWith('.') || s === '@app/common' || s === 'mvdan-sh';
    expect(violations('libs/task-domain/src', (s) => !allowed(s))).toEqual([]);
  });

  it('keeps workflow code bundleable: relative imports only, no Node or Nest', () => {
    // @temporalio/workflow is the one package made for Temporal's deterministic workflow sandbox.
    expect(violations('libs/workflows/src', (s) => !s.startsWith('.') && s !== '@temporalio/workflow')).toEqual([]);
  });

  it('keeps libraries independent of services', () => {
    expect(violations('libs', (s) => /(^|\/)services\//.test(s))).toEqual([]);
  });

  it('keeps services from importing one another (they talk over the bus)', () => {
    for (const service of ['api', 'orchestrator', 'sandbox', 'artifacts']) {
      const others = ['api', 'orchestrator', 'sandbox', 'artifacts'].filter((s) => s !== service);
      expect(violations(`services/${service}/src`, (s) => others.some((o) => s.includes(`${o}/src`)))).toEqual([]);
    }
  });
});
