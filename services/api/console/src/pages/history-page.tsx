import type { AtsClient, TaskEventRecord } from '@agentic-task-service/client';
import { useEffect, useState } from 'preact/hooks';
import { StepActions } from '../components/step-actions';
import { WorkspaceChanges } from '../components/workspace-changes';
import { messageOf } from '../errors';
import { hrefOf } from '../route';

/**
 * The audit trail: every event of the task from event 1, with its id and the time the service
 * recorded it, read from the events endpoint (SSE events carry no time). While a turn runs the
 * stream says when more exist; each time, the records after the last one shown are read, so a
 * live row shows its recorded time too, never when this page received it.
 */
export function HistoryPage({ client, taskId }: { client: AtsClient; taskId: string }) {
  const [rows, setRows] = useState<TaskEventRecord[]>([]);
  const [error, setError] = useState<string>();
  useEffect(() => {
    const abort = new AbortController();
    let shown = 0;
    /** Shows every record after the last one shown, a page at a time. */
    const readAfterShown = async () => {
      for (;;) {
        const page = await client.tasks.eventsPage(taskId, { after: shown, limit: 1000 });
        if (abort.signal.aborted) return;
        const added = page.events;
        if (added.length > 0) {
          shown = added[added.length - 1].id;
          setRows((before) => [...before, ...added]);
        }
        if (page.nextAfter === undefined) return;
      }
    };
    void (async () => {
      try {
        await readAfterShown();
        // Ends at once when no turn runs; a burst of live events costs one read, not one per event.
        for await (const event of client.tasks.stream(taskId, { after: shown, signal: abort.signal })) {
          if (event.id > shown) await readAfterShown();
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
            <th>Recorded</th>
            <th>Kind</th>
            <th>Data</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((event) => (
            <tr key={event.id} data-event-id={event.id}>
              <td>{event.id}</td>
              <td>
                <time dateTime={event.at}>{event.at}</time>
              </td>
              <td>{event.type}</td>
              <td>
                <pre>{JSON.stringify(event.data, null, 2)}</pre>
                <EventExtras client={client} taskId={taskId} event={event} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** Beside a row's data: a step's changes, files and fork action, and where a fork came from. */
function EventExtras({ client, taskId, event }: { client: AtsClient; taskId: string; event: TaskEventRecord }) {
  switch (event.type) {
    case 'tool_result':
      return (
        <>
          <WorkspaceChanges changes={event.data.changes} truncated={event.data.changesTruncated} />
          <StepActions client={client} taskId={taskId} eventId={event.id} kind="tool_result" />
        </>
      );
    case 'done':
      return <StepActions client={client} taskId={taskId} eventId={event.id} kind="done" />;
    case 'forked':
      return (
        <p>
          Forked from <a href={hrefOf({ page: 'task', id: event.data.taskId })}>{event.data.taskId}</a> after event {event.data.eventId}
        </p>
      );
    default:
      return null;
  }
}
