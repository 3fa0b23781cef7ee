import type { ShNode, ShParser, syntax as shSyntax } from 'mvdan-sh';

// What a `shell` tool call would run, read with a real shell parser (mvdan/sh) rather than
// regular expressions, so quoted separators are not separators and every nested command is seen.
// `proceed_always` may vouch for a command line only when the program names tell the whole story.

export type ShellAnalysis =
  { readonly vouchable: true; readonly programs: readonly string[] } | { readonly vouchable: false; readonly reason: string };

/**
 * Programs that run other code given as arguments or input, or change how other programs run:
 * approving their name says nothing about what they will do, so they always ask again.
 */
const NEVER_VOUCHED = new Set([
  'eval',
  'exec',
  'source',
  '.',
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'fish',
  'csh',
  'tcsh',
  'env',
  'xargs',
  'sudo',
  'su',
  'doas',
  'command',
  'builtin',
  'nohup',
  'timeout',
  'nice',
  'ionice',
  'time',
  'setsid',
  'stdbuf',
  'chroot',
  'unshare',
  'nsenter',
  'trap',
  'alias',
  'enable',
  'coproc',
]);

/** Arguments that make an otherwise harmless program run or delete things. */
const RISKY_ARGS: Readonly<Record<string, ReadonlySet<string>>> = {
  find: new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprintf', '-fls']),
};

/** Node types that run code no program name vouches for, or rebind names and variables. */
const REFUSED_NODES: Readonly<Record<string, string>> = {
  CmdSubst: 'command substitution',
  ProcSubst: 'process substitution',
  DeclClause: 'a declaration (export, declare, local, …)',
  FuncDecl: 'a function definition',
  CoprocClause: 'a coprocess',
  Assign: 'a variable assignment',
};

type Syntax = typeof shSyntax;

interface ShellParsing {
  readonly syntax: Syntax;
  readonly parser: ShParser;
  readonly redirectOps: ReadonlyMap<number, 'input' | 'dup' | 'output'>;
}

let parsing: ShellParsing | undefined;

/**
 * The parser, loaded at the first analysis: mvdan-sh (mvdan/sh compiled to JavaScript) costs every
 * start about 0.15 s of CPU and ~10 MiB of heap, and only `proceed_always` on a `shell` call needs it
 * (BENCHMARKS.md, "Footprint"). Synchronous because the decider that asks is.
 */
function shellParsing(): ShellParsing {
  if (!parsing) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
    const { syntax } = require('mvdan-sh') as { syntax: Syntax };
    const parser = syntax.NewParser();
    parsing = { syntax, parser, redirectOps: learnRedirectOps(syntax, parser) };
  }
  return parsing;
}

export function analyseShellCommand(command: unknown): ShellAnalysis {
  if (typeof command !== 'string' || command.trim() === '') return refuse('no command');
  const { syntax, parser, redirectOps } = shellParsing();
  let file: ShNode;
  try {
    file = parser.Parse(command, 'command');
  } catch {
    return refuse('the command does not parse');
  }
  const programs = new Set<string>();
  let refusal: string | undefined;
  syntax.Walk(file, (node) => {
    if (!node || refusal) return false;
    const type = syntax.NodeType(node);
    if (type in REFUSED_NODES) refusal = REFUSED_NODES[type];
    else if (type === 'Redirect') refusal = redirectRefusal(node, redirectOps, syntax);
    else if (type === 'CallExpr') {
      const result = programOf(node, syntax);
      if (typeof result === 'string') programs.add(result);
      else refusal = result.reason;
    }
    return refusal === undefined;
  });
  if (refusal) return refuse(refusal);
  if (programs.size === 0) return refuse('no program to vouch for');
  return { vouchable: true, programs: [...programs].sort() };
}

function programOf(call: ShNode, syntax: Syntax): string | { reason: string } {
  const args = call.Args as { length: number; [i: number]: ShNode };
  if ((call.Assigns as { length: number }).length > 0) return { reason: REFUSED_NODES.Assign };
  const name = literal(args[0], syntax);
  if (name === undefined) return { reason: 'a program name that is not a plain word' };
  if (NEVER_VOUCHED.has(name)) return { reason: `\`${name}\` runs code that its name does not vouch for` };
  const risky = RISKY_ARGS[name];
  for (let i = 1; risky && i < args.length; i++) {
    const arg = literal(args[i], syntax);
    if (arg !== undefined && risky.has(arg)) return { reason: `\`${name} ${arg}\`` };
  }
  return name;
}

function redirectRefusal(redirect: ShNode, redirectOps: ShellParsing['redirectOps'], syntax: Syntax): string | undefined {
  const op = redirectOps.get(redirect.Op as number);
  if (op === 'input') return undefined;
  const target = literal(redirect.Word as ShNode | undefined, syntax);
  if (op === 'dup' && target !== undefined && /^(\d+|-)$/.test(target)) return undefined; // 2>&1
  if (target === '/dev/null') return undefined;
  return 'output redirection';
}

/** The word's text when it is one plain literal (no quotes, no expansions), else undefined. */
function literal(word: ShNode | undefined, syntax: Syntax): string | undefined {
  if (!word) return undefined;
  const parts = word.Parts as { length: number; [i: number]: ShNode };
  if (parts.length !== 1 || syntax.NodeType(parts[0]) !== 'Lit') return undefined;
  return parts[0].Value as string;
}

/**
 * The parser numbers redirection operators internally; rather than hard-coding its numbers,
 * learn them once by parsing one example of each.
 */
function learnRedirectOps(syntax: Syntax, parser: ShParser): Map<number, 'input' | 'dup' | 'output'> {
  const examples: Array<[string, 'input' | 'dup' | 'output']> = [
    ['c < f', 'input'],
    ['c <& 3', 'input'],
    ['c <<< w', 'input'],
    ['c << E\nE', 'input'],
    ['c <<- E\nE', 'input'],
    ['c >& 2', 'dup'],
    ['c > f', 'output'],
    ['c >> f', 'output'],
    ['c <> f', 'output'],
    ['c >| f', 'output'],
    ['c &> f', 'output'],
    ['c &>> f', 'output'],
  ];
  const ops = new Map<number, 'input' | 'dup' | 'output'>();
  for (const [src, kind] of examples) {
    syntax.Walk(parser.Parse(src, 'probe'), (node) => {
      if (node && syntax.NodeType(node) === 'Redirect') ops.set(node.Op as number, kind);
      return true;
    });
  }
  return ops;
}

const refuse = (reason: string): ShellAnalysis => ({ vouchable: false, reason });
