import { ApprovalRule } from './task.events';

// What counts as a "similar call" for `proceed_always` (CONTRACT.md): the same tool; for `shell`,
// a command starting with the same program. Anything a program name cannot vouch for (several
// commands, substitutions, redirections) is never auto-approved.

const SHELL_META = /[;&|`$<>()\n\\]/;

/** First word of a plain shell command, or undefined when the line is not a plain command. */
export function programOf(command: unknown): string | undefined {
  if (typeof command !== 'string') return undefined;
  const line = command.trim();
  if (line === '' || SHELL_META.test(line)) return undefined;
  return line.split(/\s+/)[0];
}

export function ruleFor(toolName: string, args: Readonly<Record<string, unknown>>): ApprovalRule | undefined {
  if (toolName !== 'shell') return { toolName };
  const program = programOf(args.command);
  return program ? { toolName, program } : undefined;
}

export function findMatchingRule(
  rules: readonly ApprovalRule[],
  toolName: string,
  args: Readonly<Record<string, unknown>>,
): ApprovalRule | undefined {
  const wanted = ruleFor(toolName, args);
  if (!wanted) return undefined;
  return rules.find((r) => r.toolName === wanted.toolName && r.program === wanted.program);
}
