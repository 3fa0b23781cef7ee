import { ApprovalRule } from '../task.events';
import { analyseShellCommand } from './shell-command';

// What counts as a "similar call" for `proceed_always` (CONTRACT.md), for the rest of the task:
// - `shell`: every program in the command line has been approved before (in any rules); a line
//   with output redirection, substitutions, assignments or code-running programs (eval, sh -c,
//   xargs, …) always asks again (see shell-command.ts);
// - `write_file` / `edit_file`: the same tool on the same path;
// - anything else, MCP tools included (`mcp__<server>__<tool>` names the server and the tool):
//   the same tool name.

const PATH_SCOPED_TOOLS = new Set(['write_file', 'edit_file']);

/** The rule a `proceed_always` on this call adds, or undefined when no rule can be safe. */
export function ruleFor(toolName: string, args: Readonly<Record<string, unknown>>): ApprovalRule | undefined {
  if (toolName === 'shell') {
    const analysis = analyseShellCommand(args.command);
    return analysis.vouchable ? { toolName, programs: analysis.programs } : undefined;
  }
  if (PATH_SCOPED_TOOLS.has(toolName)) {
    const path = normalisePath(args.path);
    return path === undefined ? undefined : { toolName, path };
  }
  return { toolName };
}

/** The rule (or, for `shell`, the union of rules) that approves this call without asking. */
export function findMatchingRule(
  rules: readonly ApprovalRule[],
  toolName: string,
  args: Readonly<Record<string, unknown>>,
): ApprovalRule | undefined {
  const own = rules.filter((r) => r.toolName === toolName);
  if (own.length === 0) return undefined;
  if (toolName === 'shell') {
    const analysis = analyseShellCommand(args.command);
    if (!analysis.vouchable) return undefined;
    const approved = new Set(own.flatMap(programsOf));
    return analysis.programs.every((p) => approved.has(p)) ? { toolName, programs: analysis.programs } : undefined;
  }
  if (PATH_SCOPED_TOOLS.has(toolName)) {
    const path = normalisePath(args.path);
    return own.find((r) => r.path !== undefined && r.path === path);
  }
  return own.find((r) => r.programs === undefined && r.program === undefined && r.path === undefined);
}

/** Rules recorded before `programs` existed carry one `program`. */
const programsOf = (rule: ApprovalRule): readonly string[] => rule.programs ?? (rule.program ? [rule.program] : []);

/** `./a//b/` and `a/b` are the same file; anything that is not a plain relative string is no path. */
function normalisePath(path: unknown): string | undefined {
  if (typeof path !== 'string') return undefined;
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (path.startsWith('/') || parts.length === 0 || parts.includes('..')) return undefined;
  return parts.join('/');
}
