import type { TaskStreamEvent } from '@agentic-task-service/client';
import type { Terminal } from './terminal';
import { safeData, safeLine, safeText } from './untrusted-text';

const OUTPUT_LINES = 3;
const LINE_WIDTH = 120;

/**
 * Prints a task's events for a person: each tool call on one line, its result with the first
 * lines of output dimmed, model text as it arrives, and at each `done` the turn's usage and the
 * artifacts it wrote. Everything the service sent goes through safeText/safeLine.
 */
export class EventPrinter {
  private usage: TurnUsage = { ...NO_USAGE };
  private artifacts = new Map<string, number>();

  private readonly taskId: string;

  constructor(
    private readonly term: Terminal,
    taskId: string,
  ) {
    this.taskId = safeLine(taskId);
  }

  print(untrusted: TaskStreamEvent): void {
    const c = this.term.colors;
    const event = safeData(untrusted);
    switch (event.type) {
      case 'message':
        return this.term.line(`${c.cyan('›')} ${c.bold(safeText(event.data.text))}`);
      case 'status':
        return this.term.line(c.dim(`turn ${event.data.turn} started`));
      case 'usage':
        this.usage.inputTokens += event.data.inputTokens;
        this.usage.outputTokens += event.data.outputTokens;
        this.usage.totalTokens += event.data.totalTokens;
        this.usage.costUsd = this.usage.costUsd === null || event.data.costUsd === null ? null : this.usage.costUsd + event.data.costUsd;
        return;
      case 'content':
        return this.term.write(safeText(event.data.text));
      case 'tool_call': {
        const how =
          event.data.status === 'awaiting_approval'
            ? c.yellow(' (awaiting approval)')
            : event.data.approvedByRule
              ? c.dim(' (allowed by rule)')
              : '';
        return this.term.line(`${c.magenta('●')} ${c.bold(callLine(event.data.toolName, event.data.args))}${how}`);
      }
      case 'tool_decision':
        return this.term.line(`  ${decisionText(event.data, c)}`);
      case 'tool_started':
        return;
      case 'tool_result': {
        const ok = event.data.status === 'success';
        const mark = ok ? c.green('✓') : c.red('✗');
        const exit = event.data.exitCode === undefined ? '' : ` exit ${event.data.exitCode}`;
        this.term.line(`  ${mark} ${event.data.status}${exit} ${c.dim(`${event.data.durationMs} ms`)}`);
        for (const line of firstLines(event.data.output)) this.term.line(c.dim(`    ${line}`));
        return;
      }
      case 'artifact':
        if (event.data.status === 'removed') {
          this.artifacts.delete(event.data.path);
          return this.term.line(c.dim(`  ↳ removed ${safeLine(event.data.path)}`));
        }
        this.artifacts.set(event.data.path, event.data.size);
        return this.term.line(c.dim(`  ↳ wrote ${safeLine(event.data.path)} (${bytes(event.data.size)})`));
      case 'artifact_links':
        return this.term.line(c.dim(`  ↳ links: ${event.data.links.map(safeLine).join(' ')}`));
      case 'sandbox':
        return this.term.line(c.dim(`sandbox ${event.data.status}`));
      case 'notice':
        return this.term.line(c.yellow(`! ${safeLine(event.data.message)}`));
      case 'egress':
        return this.term.line(egressLine(event.data, c));
      case 'forked':
        return this.term.line(c.dim(`forked from ${safeLine(event.data.taskId)} after event ${event.data.eventId}`));
      case 'rolled_back':
        return this.term.line(
          c.dim(`turn undone: events ${event.data.fromEventId} to ${event.data.toEventId} left out, workspace as before it`),
        );
      case 'done':
        return this.printDone(event.data);
      default: {
        const _: never = event;
        return _;
      }
    }
  }

  private printDone(done: { status: string; error?: string; turn: number; reason?: string; usage?: TurnUsage }): void {
    const c = this.term.colors;
    const status =
      done.status === 'completed' ? c.green(`✔ ${done.status}`) : c.red(`✖ ${done.status}${done.reason ? ` (${done.reason})` : ''}`);
    this.term.line(`${status}${done.error ? `: ${safeLine(done.error)}` : ''}`);
    // The turn's usage as recorded on done; summed from the usage events for turns that ended without it.
    this.term.line(c.dim(`usage: ${usageText(done.usage ?? this.usage)}`));
    if (this.artifacts.size > 0) {
      this.term.line('artifacts:');
      for (const [path, size] of this.artifacts) this.term.line(`  ${safeLine(path)} ${c.dim(`(${bytes(size)})`)}`);
      this.term.line(c.dim(`  ats download ${this.taskId} -o <dir>`));
    }
    this.usage = { ...NO_USAGE };
    this.artifacts = new Map();
  }
}

type Decision = Extract<TaskStreamEvent, { type: 'tool_decision' }>['data'];

function decisionText(decision: Decision, c: Terminal['colors']): string {
  switch (decision.outcome) {
    case 'proceed_once':
      return c.green('✓ approved once');
    case 'proceed_always':
      return c.green('✓ always allowed');
    case 'cancel':
      return c.red('✗ denied');
    case 'expired':
      return c.red(`✗ expired after ${decision.timeoutMs} ms without a decision`);
  }
}

type Egress = Extract<TaskStreamEvent, { type: 'egress' }>['data'];

/**
 * One connection a call's command made through the egress proxy, under the call (the stream
 * sends them right before its result): where to, and what it carried or why it was refused.
 */
export function egressLine(egress: Egress, c: Terminal['colors']): string {
  // host and port come from the sandboxed command: one line, whatever they hold.
  const where = `↗ ${safeLine(`${egress.host}:${egress.port}`)}`;
  if (!egress.allowed) return `  ${c.red(`${where} ${safeLine(egress.reason ?? 'refused')}`)}`;
  return `  ${c.dim(`${where} ${bytes(egress.bytesOut)} out / ${bytes(egress.bytesIn)} in, ${egress.durationMs} ms`)}`;
}

/** A tool call on one line: the tool's name and a short form of its arguments. */
export function callLine(toolName: string, args: Record<string, unknown>): string {
  const shown = shortArgs(args);
  return shown ? `${safeLine(toolName)} ${shown}` : safeLine(toolName);
}

/** A call's arguments on one line: a shell command as it is, anything else as key=value. */
export function shortArgs(args: Record<string, unknown>, max = 80): string {
  const command = args.command;
  const text =
    typeof command === 'string' && Object.keys(args).length === 1
      ? command
      : Object.entries(args)
          .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
          .join(' ');
  const line = safeLine(text);
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The first lines of a tool's output, each cut to the line width, and how many more there are. */
export function firstLines(output: string, lines = OUTPUT_LINES): string[] {
  const all = output.replace(/\n+$/, '').split('\n');
  if (all.length === 1 && all[0] === '') return [];
  const shown = all.slice(0, lines).map((line) => {
    const safe = safeLine(line);
    return safe.length > LINE_WIDTH ? `${safe.slice(0, LINE_WIDTH - 1)}…` : safe;
  });
  return all.length > lines ? [...shown, `… ${all.length - lines} more lines`] : shown;
}

const count = (n: number) => n.toLocaleString('en-US');

interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  costUsd: number | null;
}

const NO_USAGE: TurnUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 };

/** `1,200 tokens (1,000 in, 200 out), $0.0042`; a cost the service could not price says so. */
export function usageText(usage: { inputTokens: number; outputTokens: number; totalTokens: number; costUsd?: number | null }): string {
  const tokens = `${count(usage.totalTokens)} tokens (${count(usage.inputTokens)} in, ${count(usage.outputTokens)} out)`;
  return `${tokens}, ${usd(usage.costUsd ?? null)}`;
}

/** Four decimals: a cent is too coarse for one model call. */
export const usd = (costUsd: number | null): string => (costUsd === null ? 'cost unknown (no price)' : `$${costUsd.toFixed(4)}`);

export function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / 1024 / 1024).toFixed(1)} MiB`;
}
