import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

// Every page is reached by links, and code comments cite pages and files by path: once a page
// moves or a heading is renamed, those go stale without a sound. This walks them all: each
// relative link and anchor of the Markdown pages, each repo path and page heading named in a code
// comment, must resolve inside the repository; and nothing may cite the contract, spec or style
// files that lived outside it (OUTSIDE_FILES): docs/api.md holds the contract now.

const ROOT = resolve(__dirname, '..', '..');
const CODE_FOLDERS = ['services', 'libs', 'test', 'scripts', 'bench', 'infra', 'proto'];
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'generated', '.git']);
const CODE_EXTENSIONS = new Set(['.ts', '.tsx', '.js', '.mjs', '.cjs', '.sh', '.proto']);
const OUTSIDE_FILES = /\b(?:CONTRACT|SPEC|STYLE)\.md\b/;

/**
 * Files owned by a branch in flight, whose comments are fixed when it lands; each entry names why.
 * Keep this empty otherwise.
 */
const IN_FLIGHT: Record<string, string> = {};

function walk(folder: string, keep: (file: string) => boolean): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : walk(path, keep);
    return entry.isFile() && keep(path) ? [path] : [];
  });
}

const rel = (path: string) => relative(ROOT, path).split(sep).join('/');

/** GitHub's heading anchor: text content lower-cased, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The lines of a Markdown page outside fenced code blocks. */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

function headings(text: string): string[] {
  return proseLines(text)
    .map((line) => /^#{1,6} +(.*?) *#*$/.exec(line)?.[1])
    .filter((h): h is string => h !== undefined);
}

/** Anchors a page offers, with GitHub's -1, -2 … suffixes for repeated headings. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const heading of headings(text)) {
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Relative link targets of a page: `[text](target)` outside code, external addresses left out. */
export function relativeLinks(text: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(m[1])) targets.push(m[1]);
    }
  }
  return targets;
}

/** Why a link from `page` to `target` does not resolve, or undefined when it does. */
export function brokenLink(page: string, target: string, read: (path: string) => string | undefined): string | undefined {
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = pathPart === '' ? page : resolve(dirname(page), decodeURIComponent(pathPart));
  if (!file.startsWith(ROOT + sep)) return 'points outside the repository';
  const text = read(file);
  if (text === undefined) return 'no such file';
  if (anchor === undefined || anchor === '') return undefined;
  if (extname(file) !== '.md') return 'an anchor into a file that is not Markdown';
  return anchorsOf(text).has(anchor) ? undefined : `no heading "#${anchor}" in ${rel(file)}`;
}

/** The comments of a source file: TypeScript's own comment ranges, or `#` and `//` lines elsewhere. */
function commentsOf(path: string, text: string): string[] {
  if (!['.ts', '.tsx', '.js', '.mjs', '.cjs'].includes(extname(path))) {
    return text.split('\n').filter((line) => /^\s*(#|\/\/|\*)/.test(line) || /\s#\s/.test(line));
  }
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false);
  const ranges = new Map<number, string>();
  const collect = (node: ts.Node) => {
    for (const range of [
      ...(ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []),
      ...(ts.getTrailingCommentRanges(text, node.getEnd()) ?? []),
    ]) {
      ranges.set(range.pos, text.slice(range.pos, range.end));
    }
    node.forEachChild(collect);
  };
  collect(source);
  for (const range of ts.getLeadingCommentRanges(text, source.endOfFileToken.getFullStart()) ?? []) {
    ranges.set(range.pos, text.slice(range.pos, range.end));
  }
  return [...ranges.values()];
}

const PATH_IN_COMMENT = new RegExp(
  String.raw`(?<![\w./@-])((?:${[...CODE_FOLDERS, 'docs'].join('|')})/[\w.@/-]*\.(?:ts|tsx|js|mjs|json|md|sh|proto|sql|yml|yaml|conf|png))(?![\w/])`,
  'g',
);
// A page and a heading, e.g. docs/api.md then "Webhooks" in quotes, with a comma or not. A heading
// may be named by its first words: "Footprint" for "Footprint: RSS after start (issue 19)".
const SECTION_IN_COMMENT = /((?:docs\/[\w/.-]+\.md|README(?:\.md)?|BENCHMARKS\.md))(?:,|'s)? *\(?"([^"]+)"/g;

/** Whether a quoted name stands for a heading: the heading itself, or its first words. */
function namesHeading(heading: string, name: string): boolean {
  const text = heading.replace(/`/g, '');
  return text === name || slug(text) === slug(name) || (text.startsWith(name) && /^[\s:,(]/.test(text.slice(name.length)));
}

/** Problems of the references one comment makes, each as a sentence. */
export function brokenReferences(comment: string, read: (path: string) => string | undefined): string[] {
  const problems: string[] = [];
  const flat = comment.replace(/\s*\n\s*(?:\*|\/\/|#)?\s*/g, ' ');
  if (OUTSIDE_FILES.test(flat)) problems.push(`cites ${OUTSIDE_FILES.exec(flat)![0]}, which is not in the repository`);
  for (const [, path] of flat.matchAll(PATH_IN_COMMENT)) {
    if (read(join(ROOT, path)) === undefined && !existsSync(join(ROOT, path))) problems.push(`names ${path}, which does not exist`);
  }
  for (const [, page, heading] of flat.matchAll(SECTION_IN_COMMENT)) {
    const file = /^README/.test(page) ? 'README.md' : page;
    const text = read(join(ROOT, file));
    if (text === undefined) problems.push(`names ${page}, which does not exist`);
    else if (!headings(text).some((h) => namesHeading(h, heading))) {
      problems.push(`names ${page} "${heading}", a heading ${file} does not have`);
    }
  }
  return problems;
}

const cache = new Map<string, string | undefined>();
function read(path: string): string | undefined {
  if (!cache.has(path)) cache.set(path, existsSync(path) && statSync(path).isFile() ? readFileSync(path, 'utf8') : undefined);
  return cache.get(path);
}

const PAGES = [join(ROOT, 'README.md'), join(ROOT, 'BENCHMARKS.md'), ...walk(join(ROOT, 'docs'), (f) => f.endsWith('.md'))];

describe('links and references', () => {
  it('resolves every relative link and anchor of README.md, BENCHMARKS.md and docs/', () => {
    const broken = PAGES.flatMap((page) =>
      relativeLinks(read(page)!).flatMap((target) => {
        const why = brokenLink(page, target, read);
        return why ? [`${rel(page)}: (${target}) ${why}`] : [];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('finds links in the pages, so that the walk above walks something', () => {
    expect(PAGES.length).toBeGreaterThan(10);
    expect(relativeLinks(read(join(ROOT, 'README.md'))!).length).toBeGreaterThan(10);
  });

  it('resolves every repo path and page heading named in a code comment', () => {
    const isCode = (f: string) => CODE_EXTENSIONS.has(extname(f));
    const rootFiles = readdirSync(ROOT, { withFileTypes: true }).filter((e) => e.isFile() && isCode(e.name));
    const files = [...rootFiles.map((e) => join(ROOT, e.name)), ...CODE_FOLDERS.flatMap((folder) => walk(join(ROOT, folder), isCode))];
    expect(files.length).toBeGreaterThan(100);
    const broken = files
      .filter((file) => !(rel(file) in IN_FLIGHT))
      .flatMap((file) =>
        commentsOf(file, read(file)!).flatMap((comment) => brokenReferences(comment, read).map((why) => `${rel(file)}: ${why}`)),
      );
    expect(broken).toEqual([]);
  });

  it('cites none of the contract, spec and style files outside the repository in the pages', () => {
    const citing = PAGES.filter((page) => OUTSIDE_FILES.test(read(page)!)).map(rel);
    expect(citing).toEqual([]);
  });

  it("turns headings into GitHub's anchors", () => {
    expect(slug('`GET /api/v1/tasks/{id}/stream`')).toBe('get-apiv1tasksidstream');
    expect(slug('Streaming events (SSE)')).toBe('streaming-events-sse');
    expect(slug('Distributed mode: not yet')).toBe('distributed-mode-not-yet');
    expect([...anchorsOf('# A\n\n## A\n```\n# not a heading\n```\n')]).toEqual(['a', 'a-1']);
  });
});
