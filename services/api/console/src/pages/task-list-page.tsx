import type { AtsClient, Task } from '@agentic-task-service/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import { StatusBadge } from '../components/status-badge';
import { messageOf } from '../errors';
import { hrefOf } from '../route';

const PAGE_SIZE = 25;

/** Newest first; the next page is fetched when the end of the list scrolls into view. */
export function TaskListPage({ client }: { client: AtsClient }) {
  const [showHidden, setShowHidden] = useState(false);
  const [tasks, setTasks] = useState<Task[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string>();
  const end = useRef<HTMLDivElement>(null);
  // Bumped when "show hidden" changes, so an answer for the old setting is dropped.
  const generation = useRef(0);

  const loadMore = async (from: string | undefined, gen: number) => {
    setLoading(true);
    try {
      const page = await client.tasks.listPage({ cursor: from, limit: PAGE_SIZE, includeHidden: showHidden });
      if (gen !== generation.current) return;
      setTasks((shown) => (from ? [...shown, ...page.tasks] : page.tasks));
      setCursor(page.nextCursor);
    } catch (failure) {
      if (gen === generation.current) setError(messageOf(failure));
    } finally {
      if (gen === generation.current) setLoading(false);
    }
  };

  useEffect(() => {
    const gen = ++generation.current;
    setTasks([]);
    setCursor(undefined);
    setError(undefined);
    void loadMore(undefined, gen);
  }, [showHidden]);

  useEffect(() => {
    if (!end.current || !cursor || loading) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) void loadMore(cursor, generation.current);
    });
    observer.observe(end.current);
    return () => observer.disconnect();
  }, [cursor, loading]);

  return (
    <section>
      <div class="toolbar">
        <h1>Tasks</h1>
        <label class="inline">
          <input type="checkbox" checked={showHidden} onChange={(e) => setShowHidden(e.currentTarget.checked)} />
          Show hidden
        </label>
        <a class="button" href={hrefOf({ page: 'new' })}>
          New task
        </a>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <ul class="task-list" aria-label="Tasks">
        {tasks.map((task) => (
          <li key={task.id}>
            <a href={hrefOf({ page: 'task', id: task.id })}>{firstLine(task)}</a>
            <StatusBadge status={task.status} />
            {!task.showInHistory && <span class="tag">hidden</span>}
            <time dateTime={task.createdAt}>{new Date(task.createdAt).toLocaleString()}</time>
          </li>
        ))}
      </ul>
      {!loading && tasks.length === 0 && !error && <p class="muted">No tasks yet.</p>}
      {loading && <p class="muted">Loading…</p>}
      <div ref={end} class="list-end" />
    </section>
  );
}

/** The link text starts with the task's first message (CONTRACT "Console and CLI"). */
const firstLine = (task: Task): string => {
  const text = task.messages[0]?.text ?? task.id;
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
};
