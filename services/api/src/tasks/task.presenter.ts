import type { TaskView } from '@app/task-domain';

/** The public Task of docs/api.md "The Task resource": never secrets, env only as keys, no internal fields. */
export function presentTask(view: TaskView) {
  return {
    id: view.id,
    status: view.status,
    createdAt: view.createdAt,
    updatedAt: view.updatedAt,
    autoExecute: view.autoExecute,
    showInHistory: view.showInHistory,
    messages: view.messages,
    pendingApprovals: view.pendingApprovals,
    ...(view.error === undefined ? {} : { error: view.error }),
    usage: view.usage,
    maxTokens: view.maxTokens ?? null, // null: unlimited
    maxCostUsd: view.maxCostUsd ?? null, // null: unlimited
    webhookUrl: view.webhookUrl ?? null, // null: none given (no webhooks, or the operator's WEBHOOK_URL, never shown)
    network: view.network ?? null, // null: none given, SANDBOX_EGRESS_ALLOW applies
    envKeys: view.envKeys,
    files: view.files,
    secretNames: view.secretNames,
    notices: view.notices,
    sandbox: view.sandbox,
    turn: view.turn,
    lastEventId: view.lastEventId,
    forkedFrom: view.forkedFrom ?? null, // null: not a fork
    scheduleId: view.scheduleId ?? null, // null: not started by a schedule
  };
}
