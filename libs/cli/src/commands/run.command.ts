import type { UploadFile } from '@agentic-task-service/client';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { ApprovalChoice } from '../approval-choice';
import type { CliContext } from '../context';
import { CliExit, ExitCode } from '../exit-codes';
import type { ApprovalPolicy } from '../follow-task';
import { followTask } from '../follow-task';
import { askSecret } from '../prompts';
import { jsonLine, safeLine } from '../untrusted-text';

export interface RunOptions {
  readonly file: string[];
  readonly env: Record<string, string>;
  readonly secret: string[];
  readonly ask: boolean;
  readonly detach: boolean;
  readonly approve?: ApprovalChoice;
  readonly maxTokens?: number;
  readonly maxCost?: number;
  readonly json: boolean;
}

/** `ats run`: creates the task, then follows it to the end of its turn (or only prints its id with --detach). */
export async function runCommand(ctx: CliContext, message: string, options: RunOptions): Promise<ExitCode> {
  const { term } = ctx;
  const ats = await ctx.client();
  const secrets = await readSecrets(ctx, options.secret);
  const files = await Promise.all(options.file.map(readUpload));
  const created = await ats.tasks.create({
    message,
    autoExecute: !options.ask,
    ...(Object.keys(options.env).length > 0 ? { env: options.env } : {}),
    ...(Object.keys(secrets).length > 0 ? { secrets } : {}),
    // With files the client sends multipart, each budget a text part in digits as docs/api.md says.
    ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
    ...(options.maxCost === undefined ? {} : { maxCostUsd: options.maxCost }),
    ...(files.length > 0 ? { files } : {}),
  });
  const shownId = safeLine(created.id);
  if (options.detach) {
    if (options.json) term.line(jsonLine(created));
    else term.line(`${shownId} ${term.colors.dim(`started; follow it with: ats logs ${shownId} --follow`)}`);
    return ExitCode.ok;
  }
  if (options.json) term.error(`ats: task ${shownId}`);
  else term.line(term.colors.dim(`task ${shownId}`));
  return followTask(ats, term, created.id, { after: 0, json: options.json, approvals: approvalPolicy(ctx, options.approve) });
}

/** Prompts in a terminal unless --approve decides; elsewhere --approve or stop (exit 3). */
export function approvalPolicy(ctx: CliContext, approve: ApprovalChoice | undefined): ApprovalPolicy {
  if (approve) return { kind: 'auto', choice: approve };
  return ctx.term.interactive ? { kind: 'prompt' } : { kind: 'stop' };
}

/**
 * Each --secret K from the environment variable K, else typed at a prompt without echo; never
 * from argv, where shell history and `ps` would keep it.
 */
export async function readSecrets(ctx: CliContext, names: readonly string[]): Promise<Record<string, string>> {
  const secrets: Record<string, string> = {};
  for (const name of names) {
    const fromEnv = process.env[name];
    if (fromEnv !== undefined && fromEnv !== '') {
      secrets[name] = fromEnv;
      continue;
    }
    if (!ctx.term.interactive)
      throw new CliExit(ExitCode.failed, `ats: secret ${name}: set the environment variable ${name} (no prompt outside a terminal)`);
    const typed = await askSecret(name);
    if (typed === undefined) throw new CliExit(ExitCode.interrupted);
    secrets[name] = typed;
  }
  return secrets;
}

async function readUpload(path: string): Promise<UploadFile> {
  try {
    return { name: basename(path), content: await readFile(path) };
  } catch (error) {
    throw new CliExit(ExitCode.failed, `ats: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}
