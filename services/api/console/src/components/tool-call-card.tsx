import type { ComponentChildren } from 'preact';
import type { ApprovalOutcome } from '@agentic-task-service/client';
import type { ToolCallItem } from '../model/conversation';
import { isPending } from '../model/conversation';
import { formatDuration } from '../model/units';
import { EgressList } from './egress-list';
import { WorkspaceChanges } from './workspace-changes';

/** Long outputs start folded; short ones are shown open. */
const FOLD_LINES = 12;

/** One tool call: its arguments, its approval, its result and what it changed. Everything is rendered as text. */
export function ToolCallCard({
  item,
  onDecide,
  deciding,
  children,
}: {
  item: ToolCallItem;
  onDecide: (outcome: ApprovalOutcome) => void;
  deciding: boolean;
  /** Shown last: what can be done from the call's result (files at that step, fork). */
  children?: ComponentChildren;
}) {
  const pending = isPending(item);
  const lines = item.result ? item.result.output.split('\n').length : 0;
  return (
    <article class={`tool ${pending ? 'tool-pending' : ''}`} aria-label={`Tool call ${item.toolName}`} data-call-id={item.callId}>
      <header>
        <strong>{item.toolName}</strong> <span class="muted">{item.callId}</span> <span class="tool-state">{stateOf(item)}</span>
      </header>
      <pre class="args">{JSON.stringify(item.args, null, 2)}</pre>
      {pending && (
        <div class="actions" role="group" aria-label={`Decide ${item.toolName}`}>
          <button type="button" disabled={deciding} onClick={() => onDecide('proceed_once')}>
            Approve once
          </button>
          <button type="button" class="secondary" disabled={deciding} onClick={() => onDecide('proceed_always')}>
            Always allow
          </button>
          <button type="button" class="danger" disabled={deciding} onClick={() => onDecide('cancel')}>
            Deny
          </button>
        </div>
      )}
      <EgressList toolName={item.toolName} connections={item.egress} />
      {item.result && (
        <details class="result" open={lines <= FOLD_LINES}>
          <summary>
            Result: <span class={`result-${item.result.status}`}>{item.result.status}</span>
            {item.result.exitCode !== undefined && <> · exit code {item.result.exitCode}</>} · {formatDuration(item.result.durationMs)} ·{' '}
            {lines} {lines === 1 ? 'line' : 'lines'}
          </summary>
          <pre class="output">{item.result.output}</pre>
        </details>
      )}
      {item.result && <WorkspaceChanges changes={item.result.changes} truncated={item.result.changesTruncated} />}
      {children}
    </article>
  );
}

function stateOf(item: ToolCallItem): string {
  if (item.result) return item.result.status === 'cancelled' ? 'cancelled' : 'finished';
  if (item.decision)
    return item.decision.approved ? `approved (${item.decision.outcome})` : item.decision.outcome === 'expired' ? 'expired' : 'denied';
  if (item.started) return 'running';
  if (item.requested === 'awaiting_approval') return 'awaiting approval';
  return item.approvedByRule ? 'approved by a rule' : 'approved';
}
