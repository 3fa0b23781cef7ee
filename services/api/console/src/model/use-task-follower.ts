import { AtsError, type ArtifactFile, type AtsClient, type Task } from '@agentic-task-service/client';
import { useEffect, useReducer, useRef, useState } from 'preact/hooks';
import { messageOf } from '../errors';
import { EMPTY_CONVERSATION, foldEvent } from './conversation';

/** Events after which the task's own view (status, pending approvals) has changed. */
const REFRESHING = new Set(['status', 'tool_call', 'tool_decision', 'done']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Follows a task from event 1: one stream per turn (the service ends a stream after its turn's
 * `done`), each opened after the last event already folded in, so nothing is shown twice. Within
 * a stream the client reconnects by itself with Last-Event-ID. `wake` opens the next stream at
 * once when the page has started a turn (a follow-up).
 */
export function useTaskFollower(client: AtsClient, taskId: string) {
  const [conversation, dispatch] = useReducer(foldEvent, EMPTY_CONVERSATION);
  const [task, setTask] = useState<Task>();
  const [artifacts, setArtifacts] = useState<ArtifactFile[]>([]);
  const [error, setError] = useState<string>();
  const wakeUp = useRef<() => void>(() => undefined);
  const woken = useRef(false);

  useEffect(() => {
    const abort = new AbortController();
    const refreshTask = async () => {
      const view = await client.tasks.get(taskId);
      if (!abort.signal.aborted) setTask(view);
      return view;
    };
    const refreshArtifacts = () =>
      client.artifacts.list(taskId).then(
        (files) => !abort.signal.aborted && setArtifacts(files),
        () => undefined,
      );
    const waitForWake = () =>
      new Promise<void>((resolve) => {
        if (woken.current) return resolve();
        wakeUp.current = resolve;
        abort.signal.addEventListener('abort', () => resolve());
      });

    // A replay of a long history brings these events in bursts: one read at a time, plus one after it.
    const taskReads = coalesced(() => refreshTask().then(() => undefined));
    const artifactReads = coalesced(refreshArtifacts);

    void (async () => {
      let after = 0;
      void refreshArtifacts();
      while (!abort.signal.aborted) {
        woken.current = false;
        try {
          for await (const event of client.tasks.stream(taskId, { after, signal: abort.signal })) {
            after = Math.max(after, event.id);
            dispatch(event);
            if (REFRESHING.has(event.type)) taskReads.request();
            if (event.type === 'artifact') artifactReads.request();
          }
          setError(undefined);
          const view = await refreshTask();
          void refreshArtifacts();
          if (view.status === 'pending' || view.status === 'running' || view.status === 'awaiting_approval') await sleep(250);
          else await waitForWake();
        } catch (failure) {
          if (abort.signal.aborted) return;
          setError(messageOf(failure));
          // No such task for this key, or the key stopped working: trying again cannot help.
          if (failure instanceof AtsError && (failure.status === 404 || failure.status === 401)) return;
          await sleep(2_000);
        }
      }
    })();
    return () => abort.abort();
  }, [client, taskId]);

  const wake = () => {
    woken.current = true;
    wakeUp.current();
  };
  return { conversation, task, artifacts, error, wake, setTask };
}

/** Runs `read` when requested; requests made while it runs are merged into a single run after it. */
function coalesced(read: () => Promise<unknown>) {
  let running = false;
  let again = false;
  const request = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void read()
      .catch(() => undefined)
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          request();
        }
      });
  };
  return { request };
}
