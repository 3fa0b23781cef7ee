import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import * as client from '@agentic-task-service/client';
import type { Harness } from '../support/service-harness';
import { API_KEY, startHarness } from '../support/service-harness';

// The example of docs/guide/typescript-client.md, as a reader would paste it: it must type-check against
// the client as it is, and, run against the service, create, stream, approve and download.

const ROOT = join(__dirname, '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs', 'guide', 'typescript-client.md'), 'utf8');

/** The page's first ```ts block. */
function exampleBlock(): string {
  const block = /```ts\n([\s\S]*?)```/.exec(PAGE);
  if (!block) throw new Error('docs/guide/typescript-client.md has no ```ts block');
  return block[1];
}

/** Type errors of the block as a module of its own (top-level await), the package name mapped to libs/client. */
function typeErrors(source: string): string[] {
  const file = join(ROOT, 'test', 'docs', 'typescript-client-example.ts');
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.ES2022,
    target: ts.ScriptTarget.ES2022,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    baseUrl: ROOT,
    paths: { '@agentic-task-service/client': ['libs/client/src'] },
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    name === file ? ts.createSourceFile(name, source, version) : getSourceFile(name, version, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

/** Runs the block as CommonJS inside an async function, with its own process.env and console. */
async function run(source: string, env: Record<string, string>): Promise<string[]> {
  const output: string[] = [];
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  });
  const requireShim = (name: string) => {
    if (name !== '@agentic-task-service/client') throw new Error(`the example imports ${name}`);
    return client;
  };
  const fakeConsole = {
    log: (...args: unknown[]) => output.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')),
  };
  const body = new Function('require', 'exports', 'process', 'console', `return (async () => {\n${outputText}\n})();`);
  await body(requireShim, {}, { env }, fakeConsole);
  return output;
}

describe('docs/guide/typescript-client.md example', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(async () => h.close());

  it('is at most 15 lines and type-checks against the client', () => {
    const source = exampleBlock();
    expect(source.trimEnd().split('\n').length).toBeLessThanOrEqual(15);
    expect(typeErrors(source)).toEqual([]);
  });

  it('type-checking would catch a wrong call (the check is real)', () => {
    expect(typeErrors(exampleBlock().replace("'proceed_once'", "'proceed_twice'"))).toEqual([expect.stringContaining('proceed_twice')]);
  });

  it('creates a task, streams it, approves its tool call and downloads the artifact', async () => {
    h.model.script(
      {
        toolCalls: [
          { name: 'write_file', arguments: { path: 'downloads/haiku.md', content: 'old pond / a frog jumps in / sound of water\n' } },
        ],
      },
      { text: 'The haiku is in downloads/haiku.md.' },
    );
    const output = await run(exampleBlock(), { ATS_URL: h.url, ATS_API_KEY: API_KEY });
    expect(output).toEqual([
      `approving write_file {"path":"downloads/haiku.md","content":"old pond / a frog jumps in / sound of water\\n"}`,
      'The haiku is in downloads/haiku.md.',
      'task completed',
      'haiku.md old pond / a frog jumps in / sound of water\n',
    ]);
  });
});
