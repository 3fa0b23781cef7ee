import { randomUUID } from 'node:crypto';

/** Prefixed ids tell what they name in logs and URLs: task_…, msg_…, call_…. */
export const newId = (prefix: 'task' | 'msg' | 'call'): string => `${prefix}_${randomUUID().replace(/-/g, '')}`;
