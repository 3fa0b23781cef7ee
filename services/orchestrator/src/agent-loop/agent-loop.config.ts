import { intFromEnv } from '@app/common';
import type { ModelPrices } from '@app/model-provider';
import { modelPricesFromEnv } from '@app/model-provider';
import { maxRunningTurnsPerTenantFromEnv } from '@app/task-commands';
import { captureGenAiContentFromEnv } from '@app/tracing';

export interface AgentLoopConfig {
  /** Model calls allowed in one turn before it ends with a clear error. */
  readonly maxStepsPerTurn: number;
  /** Bound on one tool run, including the bus round trip. */
  readonly toolTimeoutMs: number;
  /** A call nobody decided on this long after it was requested is treated as declined. */
  readonly approvalTimeoutMs: number;
  /** MAX_RUNNING_TASKS_PER_TENANT: turns running at once per tenant; undefined: no cap. */
  readonly maxRunningTurnsPerTenant?: number;
  /** MODEL_PRICES over the built-in table: what each model call costs. */
  readonly modelPrices: ModelPrices;
  /** LLM_MODEL: whose price applies when an answer names no model. */
  readonly configuredModel?: string;
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: tool arguments and results on the execute_tool spans, redacted. */
  readonly captureGenAiContent?: boolean;
}

export function agentLoopConfigFromEnv(env: NodeJS.ProcessEnv): AgentLoopConfig {
  return {
    maxStepsPerTurn: intFromEnv(env, 'MAX_STEPS_PER_TURN', 50, { min: 1 }),
    // Covers a restore from snapshot, the command's own limit (SANDBOX_TIMEOUT_MS) and the artifact scan.
    toolTimeoutMs: intFromEnv(env, 'TOOL_TIMEOUT_MS', 600_000, { min: 1 }),
    approvalTimeoutMs: intFromEnv(env, 'APPROVAL_TIMEOUT_MS', 24 * 60 * 60 * 1000, { min: 1 }),
    maxRunningTurnsPerTenant: maxRunningTurnsPerTenantFromEnv(env),
    modelPrices: modelPricesFromEnv(env),
    configuredModel: env.LLM_MODEL?.trim() || undefined,
    captureGenAiContent: captureGenAiContentFromEnv(env),
  };
}
