import type { ApprovalOutcome, AtsClient } from '@agentic-task-service/client';
import { useState } from 'preact/hooks';
import { ArtifactList } from '../components/artifact-list';
import { isActive, StatusBadge } from '../components/status-badge';
import { StepActions } from '../components/step-actions';
import { ToolCallCard } from '../components/tool-call-card';
import { WorkspaceFiles } from '../components/workspace-files';
import { messageOf } from '../errors';
import type { ConversationItem } from '../model/conversation';
import { useTaskFollower } from '../model/use-task-follower';
import { hrefOf } from '../route';
import { formatUsd } from '../model/units';

/** A task as it happens: its conversation, approvals, usage, files and the follow-up box. */
export function TaskPage({ client, taskId }: { client: AtsClient; taskId: string }) {
  const { conversation, task, artifacts, error, wake, setTask } = useTaskFollower(client, taskId);
  const [actionError, setActionError] = useState<string>();
  const [deciding, setDeciding] = useState<string>();
  const [followUp, setFollowUp] = useState('');
  const [sending, setSending] = useState(false);
  const [showFilesNow, setShowFilesNow] = useState(false);

  const act = async (action: () => Promise<unknown>) => {
    setActionError(undefined);
    try {
      await action();
    } catch (failure) {
      setActionError(messageOf(failure));
    }
  };
  const decide = (callId: string, outcome: ApprovalOutcome) =>
    act(async () => {
      setDeciding(callId);
      try {
        await client.tasks.approve(taskId, callId, outcome);
      } finally {
        setDeciding(undefined);
      }
    });
  const cancel = () =>
    act(async () => {
      await client.tasks.cancel(taskId);
      setTask(await client.tasks.get(taskId));
    });
  const send = (event: Event) => {
    event.preventDefault();
    // Which button sent it: Send queues behind a running turn; the other two stop (and undo) it (docs/api.md "Follow-ups while a turn runs").
    const ifRunning = ((event as SubmitEvent).submitter?.getAttribute('value') ?? undefined) as 'interrupt' | 'rollback' | undefined;
    void act(async () => {
      setSending(true);
      try {
        await client.tasks.sendMessage(taskId, ifRunning ? { message: followUp, ifRunning } : followUp);
        setFollowUp('');
        wake();
      } finally {
        setSending(false);
      }
    });
  };

  return (
    <section class="task">
      <div class="toolbar">
        <h1>Task</h1>
        {task && <StatusBadge status={task.status} />}
        <span class="muted">{taskId}</span>
        <a href={hrefOf({ page: 'history', id: taskId })}>History</a>
        {task && isActive(task.status) && (
          <button type="button" class="danger" onClick={() => void cancel()}>
            Cancel task
          </button>
        )}
      </div>
      {(error || actionError) && (
        <p role="alert" class="error">
          {actionError ?? error}
        </p>
      )}
      {task && (
        <dl class="facts">
          {task.forkedFrom && (
            <>
              <dt>Forked from</dt>
              <dd aria-label="Forked from">
                <a href={hrefOf({ page: 'task', id: task.forkedFrom.taskId })}>{task.forkedFrom.taskId}</a> after event{' '}
                {task.forkedFrom.eventId}
              </dd>
            </>
          )}
          {task.scheduleId && (
            <>
              <dt>Started by</dt>
              <dd aria-label="Started by">
                <a href={hrefOf({ page: 'schedules' })}>schedule {task.scheduleId}</a>
              </dd>
            </>
          )}
          <dt>Tools</dt>
          <dd>{task.autoExecute ? 'run without asking' : 'ask before running'}</dd>
          <dt>Usage</dt>
          <dd aria-label="Usage">
            {conversation.usage.inputTokens} in · {conversation.usage.outputTokens} out · {conversation.usage.totalTokens} tokens
            {task.maxTokens !== null && <> (budget {task.maxTokens})</>} · {formatUsd(conversation.usage.costUsd)}
            {task.maxCostUsd !== null && <> (budget {formatUsd(task.maxCostUsd)})</>}
          </dd>
          {task.files.length > 0 && (
            <>
              <dt>Uploaded</dt>
              <dd>{task.files.map((file) => file.name).join(', ')}</dd>
            </>
          )}
          {task.envKeys.length > 0 && (
            <>
              <dt>Env</dt>
              <dd>{task.envKeys.join(', ')}</dd>
            </>
          )}
          {task.network && (
            <>
              <dt>Network</dt>
              <dd aria-label="Network allow-list">{task.network.allow.length > 0 ? task.network.allow.join(', ') : 'none allowed'}</dd>
            </>
          )}
          {task.secretNames.length > 0 && (
            <>
              <dt>Secrets</dt>
              <dd>{task.secretNames.join(', ')} (values hidden)</dd>
            </>
          )}
        </dl>
      )}
      <ol class="conversation" aria-label="Conversation">
        {conversation.items.map((item) => (
          <li key={item.eventId} data-event-id={item.eventId}>
            <Item
              client={client}
              taskId={taskId}
              item={item}
              deciding={deciding}
              decide={(callId, outcome) => void decide(callId, outcome)}
            />
          </li>
        ))}
      </ol>
      <form class="follow-up" onSubmit={send}>
        <label>
          Follow-up
          <textarea rows={3} required value={followUp} onInput={(e) => setFollowUp(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={sending}>
          Send
        </button>
        {task && (task.status === 'running' || task.status === 'awaiting_approval') && (
          <>
            <button type="submit" class="secondary" value="interrupt" disabled={sending} title="Stop the running turn and answer this now">
              Stop and send
            </button>
            <button
              type="submit"
              class="secondary"
              value="rollback"
              disabled={sending}
              title="Stop the running turn, undo its changes and leave it out of the conversation, then answer this"
            >
              Undo turn and send
            </button>
          </>
        )}
      </form>
      <h2>Files</h2>
      <ArtifactList client={client} taskId={taskId} files={artifacts} />
      <button type="button" class="secondary" aria-expanded={showFilesNow} onClick={() => setShowFilesNow(!showFilesNow)}>
        {showFilesNow ? 'Hide workspace files' : 'Workspace files now'}
      </button>
      {showFilesNow && <WorkspaceFiles client={client} taskId={taskId} />}
    </section>
  );
}

function Item({
  client,
  taskId,
  item,
  deciding,
  decide,
}: {
  client: AtsClient;
  taskId: string;
  item: ConversationItem;
  deciding?: string;
  decide: (callId: string, outcome: ApprovalOutcome) => void;
}) {
  switch (item.kind) {
    case 'user':
      return (
        <div class="bubble user" aria-label="User message">
          <p class="text">{item.text}</p>
        </div>
      );
    case 'text':
      return (
        <div class="bubble model" aria-label="Model text">
          <p class="text">{item.text}</p>
        </div>
      );
    case 'tool':
      return (
        <ToolCallCard item={item} deciding={deciding === item.callId} onDecide={(outcome) => decide(item.callId, outcome)}>
          {item.resultEventId !== undefined && (
            <StepActions client={client} taskId={taskId} eventId={item.resultEventId} kind="tool_result" />
          )}
        </ToolCallCard>
      );
    case 'turn':
      return <p class="divider">Turn {item.turn}</p>;
    case 'done':
      return (
        <>
          <p class={`divider done-${item.status}`}>
            Turn {item.status}
            {item.error && <>: {item.error}</>}
          </p>
          <StepActions client={client} taskId={taskId} eventId={item.eventId} kind="done" />
        </>
      );
    case 'notice':
      return <p class="notice">{item.text}</p>;
    case 'forked':
      return (
        <p class="divider">
          Forked from <a href={hrefOf({ page: 'task', id: item.from.taskId })}>{item.from.taskId}</a> after event {item.from.eventId}
        </p>
      );
  }
}
