import { withTimeout } from './timing';

export interface ReplayedEvent {
  readonly id: number;
  readonly event: string;
  readonly data: Record<string, any>;
}

/** A finished task's whole history, replayed over its SSE stream (which ends after `done`). */
export async function readStreamEvents(
  baseUrl: string,
  taskId: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<ReplayedEvent[]> {
  const text = await withTimeout(
    'read stream',
    fetch(`${baseUrl}/api/v1/tasks/${taskId}/stream?after=0`, { headers }).then((r) => r.text()),
    timeoutMs,
  );
  return text
    .split('\n\n')
    .map((block) =>
      Object.fromEntries(
        block
          .split('\n')
          .filter((l) => /^(id|event|data):/.test(l))
          .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
      ),
    )
    .filter((b) => b.id)
    .map((b) => ({ id: Number(b.id), event: b.event, data: (JSON.parse(b.data) as { data: Record<string, unknown> }).data }));
}
