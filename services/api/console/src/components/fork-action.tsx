import type { AtsClient } from '@agentic-task-service/client';
import { useState } from 'preact/hooks';
import { messageOf } from '../errors';
import { hrefOf } from '../route';

/**
 * "Fork from here": a new task from this task's events up to `afterEventId`, then its page. After
 * a `done` (`withMessage`) a message may be typed: it starts the fork's next turn.
 */
export function ForkAction({
  client,
  taskId,
  afterEventId,
  withMessage,
}: {
  client: AtsClient;
  taskId: string;
  afterEventId: number;
  withMessage?: boolean;
}) {
  const [open, setOpen] = useState(false);
  const [message, setMessage] = useState('');
  const [forking, setForking] = useState(false);
  const [error, setError] = useState<string>();

  const fork = async () => {
    setForking(true);
    setError(undefined);
    try {
      const text = message.trim();
      const forked = await client.tasks.fork(taskId, { afterEventId, ...(withMessage && text ? { message } : {}) });
      location.hash = hrefOf({ page: 'task', id: forked.id });
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setForking(false);
    }
  };

  if (!withMessage || !open) {
    return (
      <span class="fork-action">
        <button type="button" class="link" disabled={forking} onClick={() => (withMessage ? setOpen(true) : void fork())}>
          Fork from here
        </button>
        {error && (
          <span role="alert" class="error">
            {' '}
            {error}
          </span>
        )}
      </span>
    );
  }
  return (
    <form
      class="fork-action"
      aria-label={`Fork from event ${afterEventId}`}
      onSubmit={(event) => {
        event.preventDefault();
        void fork();
      }}
    >
      <label>
        Message for the fork (optional)
        <textarea rows={2} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
      </label>
      <div class="actions">
        <button type="submit" disabled={forking}>
          Fork
        </button>
        <button type="button" class="secondary" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </form>
  );
}
