import type { Client as TemporalClient } from '@temporalio/client';
import type { DistributedDeployment, ServiceInstance } from './distributed-deployment';
import { parseSseBlocks, readRawStream } from './sse-client';

/** One stream event as the distributed suites compare them: its id, kind and payload data. */
export interface StreamBlock {
  readonly id: number;
  readonly event: string;
  readonly data: Record<string, any>;
}

/** A task's stream from `after`, read through one API instance until it ends after `done`. */
export async function readHistory(apiUrl: string, apiKey: string, id: string, after = 0): Promise<StreamBlock[]> {
  const raw = await readRawStream(`${apiUrl}/api/v1/tasks/${id}/stream?after=${after}`, { authorization: `Bearer ${apiKey}` }, 90_000);
  return parseSseBlocks(raw.text)
    .filter((b) => b.id)
    .map((b) => ({ id: Number(b.id), event: b.event, data: JSON.parse(b.data).data }));
}

/** Polls `probe` until it gives a value; on time-out the error carries the deployment's log tail. */
export async function pollDeployment<T>(
  d: DistributedDeployment,
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${d.output().slice(-20_000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The orchestrator whose Temporal worker runs the task's first turn's step now (Temporal names a
 * worker `<pid>@<host>`, its default identity); undefined when no step is in flight.
 */
export async function orchestratorRunningStep(
  d: DistributedDeployment,
  temporal: TemporalClient,
  taskId: string,
): Promise<ServiceInstance | undefined> {
  const [inFlight] = (await temporal.workflow.getHandle(`agent-${taskId}-turn-1`).describe()).raw.pendingActivities ?? [];
  return inFlight?.lastWorkerIdentity ? orchestratorOfWorker(d, inFlight.lastWorkerIdentity) : undefined;
}

/** The orchestrator a Temporal worker identity (`<pid>@<host>`, the default) belongs to. */
export function orchestratorOfWorker(d: DistributedDeployment, identity: string): ServiceInstance | undefined {
  return d.instances.find((i) => i.service === 'orchestrator' && identity.startsWith(`${i.process.child.pid}@`));
}
