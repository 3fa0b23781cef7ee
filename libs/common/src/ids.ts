import { randomUUID } from 'node:crypto';

/** Prefixed ids tell what they name in logs and URLs: task_…, msg_…, call_…, sched_…. */
export const newId = (prefix: 'task' | 'msg' | 'call' | 'sched'): string => `${prefix}_${randomUUID().replace(/-/g, '')}`;

const TASK_ID = /^task_[a-f0-9]{32}$/;

/** Exactly what `newId('task')` makes: the check before a task id names a directory or a process. */
export const isTaskId = (id: string): boolean => TASK_ID.test(id);

const TASK_STREAM_PREFIX = 'task-';

/** The event stream that holds a task's history. */
export const taskStreamId = (taskId: string): string => `${TASK_STREAM_PREFIX}${taskId}`;

/** The task whose history `streamId` holds, or undefined for a stream that is not a task's. */
export const taskIdOf = (streamId: string): string | undefined =>
  streamId.startsWith(TASK_STREAM_PREFIX) ? streamId.slice(TASK_STREAM_PREFIX.length) : undefined;
