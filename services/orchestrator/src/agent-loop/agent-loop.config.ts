import { intFromEnv } from '@app/common';

export interface AgentLoopConfig {
  /** Model calls allowed in one turn before it ends with a clear error. */
  readonly maxStepsPerTurn: number;
  /** Bound on one tool run, including the bus round trip. */
  readonly toolTimeoutMs: number;
}

export function agentLoopConfigFromEnv(env: NodeJS.ProcessEnv): AgentLoopConfig {
  return {
    maxStepsPerTurn: intFromEnv(env, 'MAX_STEPS_PER_TURN', 50, { min: 1 }),
    toolTimeoutMs: intFromEnv(env, 'TOOL_TIMEOUT_MS', 120_000, { min: 1 }),
  };
}
