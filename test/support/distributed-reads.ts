import type { DistributedDeployment } from './distributed-deployment';
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
