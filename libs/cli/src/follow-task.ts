import type { AtsClient, TaskStreamEvent } from '@agentic-task-service/client';
import { AtsError } from '@agentic-task-service/client';
import type { ApprovalChoice } from './approval-choice';
import { APPROVAL_CHOICES } from './approval-choice';
import { callLine, EventPrinter } from './event-printer';
import { ExitCode } from './exit-codes';
import { InterruptWatcher } from './interrupts';
import { askApproval, askInterrupt } from './prompts';
import type { Terminal } from './terminal';
import { jsonLine, safeLine } from './untrusted-text';

/**
 * What to do when a call waits for approval: ask at a prompt (a terminal), decide the same way
 * every time (`--approve`), or stop and say how to decide (not a terminal, no `--approve`).
 */
export type ApprovalPolicy =
  { readonly kind: 'prompt' } | { readonly kind: 'auto'; readonly choice: ApprovalChoice } | { readonly kind: 'stop' };

export interface FollowOptions {
  /** Replay after this event id (0: the whole history). */
  readonly after: number;
  readonly json: boolean;
  readonly approvals: ApprovalPolicy;
}

type ToolCallEvent = Extract<TaskStreamEvent, { type: 'tool_call' }>;
type Step = 'continue' | 'stop' | 'interrupt';

/**
 * Follows a task's stream to the end of its turn: prints each event (or its JSON line), decides
 * approvals by the policy, and on Ctrl-C asks whether to cancel the task or only detach.
 * Resolves to the exit status: the last `done` (0 completed, 1 otherwise), 3 or 130.
 */
export async function followTask(ats: AtsClient, term: Terminal, taskId: string, options: FollowOptions): Promise<ExitCode> {
  const controller = new AbortController();
  let interrupted = false;
  const watcher = new InterruptWatcher(term.interactive, () => {
    interrupted = true;
    controller.abort(new Error('interrupted'));
  });
  const printer = new EventPrinter(term, taskId);
  let lastId = options.after;
  let lastDone: string | undefined;
  let step: Step = 'continue';
  try {
    if (!options.json) term.busy('waiting for the task');
    for await (const event of ats.tasks.stream(taskId, { after: options.after, signal: controller.signal })) {
      lastId = event.id;
      if (options.json) term.line(jsonLine(event));
      else printer.print(event);
      if (event.type === 'done') lastDone = event.data.status;
      if (event.type === 'tool_call' && event.data.status === 'awaiting_approval') {
        step = await decide(event);
        if (step !== 'continue') break;
      }
      const busy = options.json ? undefined : busyText(event);
      if (busy) term.busy(busy);
    }
  } catch (error) {
    if (!interrupted) throw error;
  } finally {
    watcher.dispose();
    term.settle();
  }
  if (interrupted || step === 'interrupt') return onInterrupt(lastId);
  if (step === 'stop') return ExitCode.pendingApproval;
  return lastDone === 'completed' ? ExitCode.ok : ExitCode.failed;

  async function decide(event: ToolCallEvent): Promise<Step> {
    const { callId, toolName, args } = event.data;
    // A replay shows calls decided long ago: only a call still pending is asked about.
    const task = await ats.tasks.get(taskId);
    if (!task.pendingApprovals.some((pending) => pending.callId === callId)) return 'continue';
    // Ctrl-C while that was read: the question to ask now is cancel or detach, not this one.
    if (interrupted) return 'interrupt';
    const call = callLine(toolName, args);
    let choice: ApprovalChoice | undefined;
    if (options.approvals.kind === 'auto') choice = options.approvals.choice;
    else if (options.approvals.kind === 'prompt') {
      term.settle();
      watcher.pause();
      choice = await askApproval(call);
      watcher.resume();
      if (!choice) return 'interrupt';
    } else {
      term.error(
        `ats: ${safeLine(taskId)} waits for approval of ${call} (${safeLine(callId)}); decide with\n` +
          `  ats approve ${safeLine(taskId)} ${safeLine(callId)} once|always|deny\n` +
          `or run again with --approve=once|always|deny`,
      );
      return 'stop';
    }
    try {
      await ats.tasks.approve(taskId, callId, APPROVAL_CHOICES[choice]);
    } catch (error) {
      // Decided meanwhile (another terminal, a timeout): the stream shows what happened.
      if (!(error instanceof AtsError && error.code === 'CONFLICT')) throw error;
      term.line(term.colors.dim(`  already decided: ${safeLine(error.message)}`));
    }
    return 'continue';
  }

  async function onInterrupt(lastEventId: number): Promise<ExitCode> {
    const shownId = safeLine(taskId);
    const resume = `ats logs ${shownId} --follow --after ${safeLine(String(lastEventId))}`;
    if (!term.interactive) {
      term.error(`ats: interrupted; ${shownId} keeps running. Follow it again with: ${resume}`);
      return ExitCode.interrupted;
    }
    if ((await askInterrupt(shownId)) === 'cancel') {
      const { status } = await ats.tasks.cancel(taskId);
      term.line(`${shownId} ${safeLine(String(status))}`);
    } else {
      term.line(`Detached: ${shownId} keeps running. Follow it again with: ${resume}`);
    }
    return ExitCode.interrupted;
  }
}

/** The spinner's text while the task works after this event; none where text may still stream in or the turn ended. */
function busyText(event: TaskStreamEvent): string | undefined {
  switch (event.type) {
    case 'tool_call':
      return event.data.status === 'approved' ? `running ${safeLine(event.data.toolName)}` : undefined;
    case 'tool_started':
      return `running ${safeLine(event.data.toolName)}`;
    case 'content':
    case 'done':
      return undefined;
    default:
      return 'thinking';
  }
}
