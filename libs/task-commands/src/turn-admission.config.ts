import { intFromEnv } from '@app/common';
import type { DecidePolicy } from '@app/task-domain';

/**
 * MAX_RUNNING_TASKS_PER_TENANT: turns running at once per tenant; undefined when unset (no cap).
 * Every API instance (its follow-ups then wait for admission) and every orchestrator (which
 * admits them) must be given the same value.
 */
export function maxRunningTurnsPerTenantFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const limit = intFromEnv(env, 'MAX_RUNNING_TASKS_PER_TENANT', 0, { min: 1 });
  return limit > 0 ? limit : undefined;
}

export const decidePolicyFromEnv = (env: NodeJS.ProcessEnv): DecidePolicy => ({
  turnsWaitForAdmission: maxRunningTurnsPerTenantFromEnv(env) !== undefined,
});
