import type { TaskStatus } from '@agentic-task-service/client';

const LABELS: Record<TaskStatus, string> = {
  pending: 'pending',
  running: 'running',
  awaiting_approval: 'awaiting approval',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

export const StatusBadge = ({ status }: { status: TaskStatus }) => <span class={`badge badge-${status}`}>{LABELS[status]}</span>;

/** A task whose turn is not over yet: its stream still has events to come. */
export const isActive = (status: TaskStatus): boolean => status === 'pending' || status === 'running' || status === 'awaiting_approval';
