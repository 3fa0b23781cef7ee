import type { AtsClient, Task, TaskStreamEvent } from '@agentic-task-service/client';
import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../errors';
import { hrefOf } from '../route';

interface Row {
  readonly event: TaskStreamEvent;
  /** When the service recorded it, where the task's view says (messages, pending approvals); else undefined. */
  readonly recordedAt?: string;
  readonly receivedAt: string;
}

/**
 * The audit trail: every event of the task from event 1, with its id, replayed from the stream
 * (and followed live while a turn runs). Events carry no time of their own: a message's comes
 * from the task's view, any other shows when this page received it.
 */
export function HistoryPage({ client, taskId }: { client: AtsClient; taskId: string }) {
  const [rows, setRows] = useState<Row[]>([]);
  const [error, setError] = useState<string>();
  useEffect(() => {
    const abort = new AbortController();
    void (async () => {
      try {
        const task = await client.tasks.get(taskId);
        let after = 0;
        for await (const event of client.tasks.stream(taskId, { after, signal: abort.signal })) {
          if (event.id <= after) continue;
          after = event.id;
          setRows((shown) => [...shown, { event, recordedAt: recordedAt(task, event), receivedAt: new Date().toISOString() }]);
        }
      } catch (failure) {
        if (!abort.signal.aborted) setError(messageOf(failure));
      }
    })();
    return () => abort.abort();
  }, [client, taskId]);

  return (
    <section>
      <div class="toolbar">
        <h1>History</h1>
        <span class="muted">{taskId}</span>
        <a href={hrefOf({ page: 'task', id: taskId })}>Back to the task</a>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <table class="history" aria-label="Events">
        <thead>
          <tr>
            <th>Id</th>
            <th>Time</th>
            <th>Kind</th>
            <th>Data</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ event, recordedAt, receivedAt }) => (
            <tr key={event.id} data-event-id={event.id}>
              <td>{event.id}</td>
              <td>
                {recordedAt ? (
                  <time dateTime={recordedAt}>{recordedAt}</time>
                ) : (
                  <span class="muted" title="when this page received it">
                    received {receivedAt}
                  </span>
                )}
              </td>
              <td>{event.type}</td>
              <td>
                <pre>{JSON.stringify(event.data, null, 2)}</pre>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function recordedAt(task: Task, event: TaskStreamEvent): string | undefined {
  if (event.type === 'message') return task.messages.find((message) => message.eventId === event.id)?.createdAt;
  if (event.type === 'tool_call') return task.pendingApprovals.find((pending) => pending.callId === event.data.callId)?.requestedAt;
  return undefined;
}
