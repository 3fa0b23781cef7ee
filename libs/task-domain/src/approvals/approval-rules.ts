import type { ApprovalRule } from '../task.events';
import { analyseShellCommand } from './shell-command';

// What counts as a "similar call" for `proceed_always` (docs/api.md "Manual approval"), for the rest of the task:
// - `shell`: every program in the command line has been approved before (in any rules); a line
//   with output redirection, substitutions, assignments or code-running programs (eval, sh -c,
//   xargs, …) always asks again (see shell-command.ts);
// - anything else, `write_file` / `edit_file` and MCP tools included (`mcp__<server>__<tool>`
//   names the server and the tool): the same tool name ("allow all edits", as users of Claude
//   Code and Gemini CLI expect). Rules recorded when file edits were scoped to one path still
//   approve the whole tool.

/** The rule a `proceed_always` on this call adds, or undefined when no rule can be safe. */
export function ruleFor(toolName: string, args: Readonly<Record<string, unknown>>): ApprovalRule | undefined {
  if (toolName === 'shell') {
    const analysis = analyseShellCommand(args.command);
    return analysis.vouchable ? { toolName, programs: analysis.programs } : undefined;
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
  return own.find((r) => r.programs === undefined && r.program === undefined);
}

/** Rules recorded before `programs` existed carry one `program`. */
const programsOf = (rule: ApprovalRule): readonly string[] => rule.programs ?? (rule.program ? [rule.program] : []);
