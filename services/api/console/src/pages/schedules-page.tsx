import type { AtsClient, Schedule } from '@agentic-task-service/client';
import { useEffect, useState } from 'preact/hooks';
import type { Row } from '../components/key-value-rows';
import { KeyValueRows, rowsToRecord } from '../components/key-value-rows';
import { messageOf } from '../errors';
import { formatUsd } from '../model/units';
import { hrefOf } from '../route';

/** Schedules (docs/api.md "Schedules"): the caller's, each with pause/resume and delete, and a form for a new one. */
export function SchedulesPage({ client }: { client: AtsClient }) {
  const [schedules, setSchedules] = useState<Schedule[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<string>();

  const reload = async () => {
    try {
      const all: Schedule[] = [];
      for await (const schedule of client.schedules.list({ limit: 100 })) all.push(schedule);
      setSchedules(all);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setLoaded(true);
    }
  };
  useEffect(() => void reload(), []);

  const act = async (what: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await what();
      await reload();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  return (
    <section>
      <div class="toolbar">
        <h1>Schedules</h1>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <ul class="task-list" aria-label="Schedules">
        {schedules.map((s) => (
          <li key={s.id} aria-label={`Schedule ${s.id}`}>
            <span>
              <code>{s.cron}</code> <span class="muted">{s.timezone}</span> {s.task.message}
              {s.target && (
                <>
                  {' → '}
                  <a href={hrefOf({ page: 'task', id: s.target })}>{s.target}</a>
                </>
              )}
            </span>
            {(s.task.maxTokens !== null || s.task.maxCostUsd !== null) && (
              <span class="tag" aria-label="Budget of each run">
                budget of each run:{' '}
                {[
                  ...(s.task.maxTokens === null ? [] : [`${s.task.maxTokens} tokens`]),
                  ...(s.task.maxCostUsd === null ? [] : [formatUsd(s.task.maxCostUsd)]),
                ].join(', ')}
              </span>
            )}
            {s.paused ? (
              <span class="tag">paused</span>
            ) : (
              s.nextRunAt && <time dateTime={s.nextRunAt}>next {new Date(s.nextRunAt).toLocaleString()}</time>
            )}
            <button type="button" class="secondary" onClick={() => void act(() => client.schedules.update(s.id, { paused: !s.paused }))}>
              {s.paused ? 'Resume' : 'Pause'}
            </button>
            <button type="button" class="danger" onClick={() => void act(() => client.schedules.delete(s.id))}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      {loaded && schedules.length === 0 && !error && <p class="muted">No schedules yet.</p>}
      <NewScheduleForm client={client} onCreated={() => void reload()} />
    </section>
  );
}

function NewScheduleForm({ client, onCreated }: { client: AtsClient; onCreated: () => void }) {
  const [cron, setCron] = useState('');
  const [timezone, setTimezone] = useState(() => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
  const [message, setMessage] = useState('');
  const [skipOverlap, setSkipOverlap] = useState(true);
  const [secrets, setSecrets] = useState<Row[]>([]);
  // As typed: empty leaves the budget to the service's default (docs/api.md "Schedules").
  const [maxTokens, setMaxTokens] = useState('');
  const [maxCostUsd, setMaxCostUsd] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await client.schedules.create({
        cron,
        timezone,
        overlap: skipOverlap ? 'skip' : 'enqueue',
        task: {
          message,
          secrets: rowsToRecord(secrets),
          ...(maxTokens === '' ? {} : { maxTokens: Number(maxTokens) }),
          ...(maxCostUsd === '' ? {} : { maxCostUsd: Number(maxCostUsd) }),
        },
      });
      // As on the new-task page: the values leave this page's memory at once.
      setSecrets([]);
      setCron('');
      setMessage('');
      setMaxTokens('');
      setMaxCostUsd('');
      onCreated();
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="create" aria-label="New schedule" onSubmit={(event) => void submit(event)}>
      <h2>New schedule</h2>
      <label>
        Cron
        <input required value={cron} placeholder="0 9 * * MON-FRI" onInput={(e) => setCron(e.currentTarget.value)} />
      </label>
      <p class="hint">5 fields (minute hour day month weekday), or 6 with seconds first.</p>
      <label>
        Time zone
        <input required value={timezone} onInput={(e) => setTimezone(e.currentTarget.value)} />
      </label>
      <label>
        Message
        <textarea required rows={3} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
      </label>
      <label class="inline">
        <input type="checkbox" checked={skipOverlap} onChange={(e) => setSkipOverlap(e.currentTarget.checked)} />
        Skip a run while the previous one is still running
      </label>
      <KeyValueRows legend="Secrets" rows={secrets} onChange={setSecrets} secret />
      <label>
        Max tokens
        <input type="number" min={1} step={1} value={maxTokens} onInput={(e) => setMaxTokens(e.currentTarget.value)} />
      </label>
      <label>
        Max cost (USD)
        <input type="number" min={0} step="any" value={maxCostUsd} onInput={(e) => setMaxCostUsd(e.currentTarget.value)} />
      </label>
      <p class="hint">Each run's budgets; empty: the service's default.</p>
      <button type="submit" disabled={busy}>
        Create schedule
      </button>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </form>
  );
}
