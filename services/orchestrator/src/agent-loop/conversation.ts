import type { ChatMessage, ModelToolCall } from '@app/model-provider';
import type { TaskEvent } from '@app/task-domain';

// The model's context is rebuilt from the task's events before every call, so a follow-up, a
// restart or another worker sees exactly the conversation the stream records.

export interface ConversationContext {
  readonly secretNames: readonly string[];
  readonly envKeys: readonly string[];
}

export function systemPrompt(ctx: ConversationContext): string {
  const lines = [
    'You are an agent working in an isolated workspace. Use the tools to carry out the task.',
    'Paths are relative to the workspace root; files meant for the user go under downloads/.',
    'When the task is done, answer with a short summary of what you did.',
  ];
  if (ctx.secretNames.length > 0) {
    lines.push(`Secrets available as environment variables (values hidden from you): ${ctx.secretNames.map((n) => `$${n}`).join(', ')}.`);
  }
  if (ctx.envKeys.length > 0) lines.push(`Environment variables set for this task: ${ctx.envKeys.join(', ')}.`);
  return lines.join('\n');
}

/**
 * `events`: the task's whole stream, oldest first (event i has the id i + 1). A rolled-back
 * turn's events (TurnRolledBack `fromEventId`..`toEventId`) are left out, but for the text of the
 * follow-ups sent meanwhile: those answer turns of their own.
 */
export function buildConversation(events: readonly TaskEvent[]): ChatMessage[] {
  const undone = rolledBackIds(events);
  const messages: ChatMessage[] = [];
  const textByMessageId = new Map<string, string>();
  let assistant: { content: string; toolCalls: ModelToolCall[] } | undefined;
  const unanswered = new Set<string>();

  const flushAssistant = () => {
    if (!assistant) return;
    messages.push({
      role: 'assistant',
      content: assistant.content || null,
      ...(assistant.toolCalls.length ? { toolCalls: assistant.toolCalls } : {}),
    });
    assistant = undefined;
  };
  // Every tool call needs an answer before the next user or assistant message (protocol rule).
  const closeUnanswered = () => {
    flushAssistant();
    for (const id of unanswered)
      messages.push({ role: 'tool', toolCallId: id, content: 'No result: the turn ended before this call ran.' });
    unanswered.clear();
  };

  for (const [index, event] of events.entries()) {
    if (undone(index + 1) && event.type !== 'UserMessageAdded') continue;
    switch (event.type) {
      case 'TaskCreated':
        messages.push({
          role: 'system',
          content: systemPrompt({ secretNames: event.data.secretNames, envKeys: Object.keys(event.data.env) }),
        });
        textByMessageId.set(event.data.messageId, event.data.text);
        break;
      case 'UserMessageAdded':
        textByMessageId.set(event.data.messageId, event.data.text);
        break;
      case 'TurnStarted':
        closeUnanswered();
        messages.push({ role: 'user', content: textByMessageId.get(event.data.messageId) ?? '' });
        break;
      case 'ModelResponded':
        closeUnanswered();
        assistant = { content: '', toolCalls: [] };
        break;
      case 'AssistantTextProduced':
        if (assistant) assistant.content += event.data.text;
        break;
      case 'ToolCallRequested':
        assistant?.toolCalls.push({ id: event.data.callId, name: event.data.toolName, arguments: { ...event.data.args } });
        unanswered.add(event.data.callId);
        break;
      case 'ToolCallFinished':
        flushAssistant();
        if (unanswered.delete(event.data.callId)) {
          messages.push({
            role: 'tool',
            toolCallId: event.data.callId,
            content: toolMessage(event.data.status, event.data.output, event.data.exitCode),
          });
        }
        break;
      // SecretsUnavailable: the turn it ended failed before the model heard of it; a later turn has
      // the secrets again. McpServerUnavailable: the model simply is not offered that server's
      // tools; the caller reads why.
      case 'SecretsUnavailable':
      case 'McpServerUnavailable':
      case 'ToolCallDecided':
      case 'ToolCallApprovalExpired':
      case 'ToolCallStarted':
      case 'ArtifactRecorded':
      case 'ArtifactRemoved':
      case 'ArtifactLinksChanged':
      case 'EgressRecorded': // the command's own output tells the model what its connections did
      case 'TaskForked': // a fork goes on with the conversation it copied, as if it were its own
      case 'TurnResumed':
      case 'SandboxExpired':
      case 'SandboxRestored':
      case 'SandboxSnapshotFailed':
      case 'TurnCompleted':
      case 'TaskFailed':
      case 'TaskCancelled':
      case 'TurnRolledBack':
        break;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  }
  closeUnanswered();
  return messages;
}

function rolledBackIds(events: readonly TaskEvent[]): (eventId: number) => boolean {
  const ranges = events.flatMap((e) => (e.type === 'TurnRolledBack' ? [[e.data.fromEventId, e.data.toEventId] as const] : []));
  if (ranges.length === 0) return () => false;
  return (eventId) => ranges.some(([from, to]) => eventId >= from && eventId <= to);
}

function toolMessage(status: string, output: string, exitCode?: number): string {
  if (status === 'success') return exitCode === undefined ? output : `exit code ${exitCode}\n${output}`;
  if (status === 'cancelled') return output;
  return `Error${exitCode === undefined ? '' : ` (exit code ${exitCode})`}: ${output}`;
}
