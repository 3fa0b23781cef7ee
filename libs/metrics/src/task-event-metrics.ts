import type { StoredEvent } from '@app/event-store';
import type { ServiceMetrics } from './service-metrics';

const TURN_EVENTS = new Set(['TurnStarted', 'TurnCompleted', 'TaskFailed', 'TaskCancelled']);

/**
 * Counts turns and approvals from the task events this process has just appended. Every task
 * event is appended once, by one process, through TaskCommandExecutor: summed over instances,
 * nothing is counted twice. `history` is the stream as it was before the append.
 */
export function recordTaskEvents(metrics: ServiceMetrics, history: readonly StoredEvent[], appended: readonly StoredEvent[]): void {
  // A fork's first append copies its source's history, whose turns and approvals were counted
  // when they happened: only what follows its TaskForked is new (the last one: a fork of a fork
  // copies the first fork's own TaskForked too).
  let forked = appended.length - 1;
  while (forked >= 0 && appended[forked].type !== 'TaskForked') forked--;
  if (forked >= 0) {
    const copy = [...history, ...appended.slice(0, forked + 1)];
    // Its running turn is the fork's now: started here, or when it is resumed (TurnResumed).
    const resumes = (appended[forked].data as { resumes?: unknown }).resumes;
    if (resumes === undefined && turnWasRunning(copy)) metrics.turnsStarted.inc();
    recordTaskEvents(metrics, copy, appended.slice(forked + 1));
    return;
  }
  for (const event of appended) {
    switch (event.type) {
      case 'TurnStarted':
      case 'TurnResumed':
        metrics.turnsStarted.inc();
        break;
      case 'TurnCompleted':
        metrics.turnsFinished.inc({ outcome: 'completed' });
        break;
      case 'TaskFailed':
        metrics.turnsFinished.inc({ outcome: 'failed' });
        break;
      case 'TaskCancelled':
        if (turnWasRunning(history)) metrics.turnsFinished.inc({ outcome: 'cancelled' });
        break;
      case 'ToolCallDecided':
        observeApproval(metrics, history, event, String((event.data as { outcome: unknown }).outcome));
        break;
      case 'ToolCallApprovalExpired':
        observeApproval(metrics, history, event, 'expired');
        break;
      case 'ModelResponded':
        observeCost(metrics, history, appended, event);
        break;
    }
  }
}

function turnWasRunning(history: readonly StoredEvent[]): boolean {
  for (let i = history.length - 1; i >= 0; i--) if (TURN_EVENTS.has(history[i].type)) return history[i].type === 'TurnStarted';
  return false;
}

function observeApproval(metrics: ServiceMetrics, history: readonly StoredEvent[], decided: StoredEvent, outcome: string): void {
  const callId = (decided.data as { callId?: unknown }).callId;
  const requested = history.find((e) => e.type === 'ToolCallRequested' && (e.data as { callId?: unknown }).callId === callId);
  if (!requested) return;
  const waitedMs = Date.parse(decided.recordedAt) - Date.parse(requested.recordedAt);
  metrics.approvalWait.observe({ outcome }, Math.max(0, waitedMs) / 1000);
}

function observeCost(
  metrics: ServiceMetrics,
  history: readonly StoredEvent[],
  appended: readonly StoredEvent[],
  responded: StoredEvent,
): void {
  const { model, usage } = responded.data as { model?: unknown; usage?: { costUsd?: unknown } };
  const cost = usage?.costUsd;
  if (typeof cost !== 'number') {
    metrics.modelCallsUnpriced.inc({ model: String(model) });
    return;
  }
  // The task's own TaskCreated (a fork's names the fork, and its tenant).
  const created = history.find((e) => e.type === 'TaskCreated') ?? appended.find((e) => e.type === 'TaskCreated');
  const tenant = (created?.data as { tenantId?: unknown } | undefined)?.tenantId;
  metrics.modelCost.inc({ tenant: typeof tenant === 'string' ? tenant : 'unknown' }, cost);
}
