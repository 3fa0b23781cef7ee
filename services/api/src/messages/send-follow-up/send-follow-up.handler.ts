import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { CheckpointSettings } from '@app/checkpoints';
import { checkpointSettingsFromEnv, checkpointsIn, retainedCheckpoints } from '@app/checkpoints';
import { ConflictError, newId } from '@app/common';
import type { StoredEvent } from '@app/event-store';
import { TaskViewsStore } from '@app/read-models';
import { RUNTIME_ENV } from '@app/runtime';
import { TaskCommandExecutor } from '@app/task-commands';
import type { InterruptTurn, TaskCommand, TaskEvent, TaskView } from '@app/task-domain';
import { evolve, initialTaskState, isTurnRunning, toTaskEvent } from '@app/task-domain';
import { ApiConfig } from '../../api.config';
import { TaskAccess } from '../../tasks/task-access';
import { checkTokenBudgetCap } from '../../validation/check-token-budget-cap';
import { SendFollowUpCommand } from './send-follow-up.command';

/**
 * A follow-up on a finished task starts the next turn; one sent mid-turn is queued, refused,
 * or stops the turn (and undoes it) as `ifRunning` says (docs/api.md "Follow-ups"). Whether a
 * turn runs is decided in the stream, with the rest: the handler only reads what the caller
 * would act on (the turn, the calls awaiting approval, where the turn began) into the command.
 */
@CommandHandler(SendFollowUpCommand)
export class SendFollowUpHandler implements ICommandHandler<SendFollowUpCommand> {
  private readonly checkpointSettings: CheckpointSettings;

  constructor(
    private readonly tasks: TaskAccess,
    private readonly commands: TaskCommandExecutor,
    private readonly views: TaskViewsStore,
    private readonly config: ApiConfig,
    @Inject(RUNTIME_ENV) env: NodeJS.ProcessEnv,
  ) {
    this.checkpointSettings = checkpointSettingsFromEnv(env);
  }

  async execute({ tenantId, taskId, text, maxTokens, ifRunning, arrivedTo, messageId: givenId, maxCostUsd }: SendFollowUpCommand) {
    checkTokenBudgetCap(maxTokens, this.config.taskMaxTokensCap);
    // The task as the caller found it on arrival: an interrupt is of the turn running then. Two
    // sent at once both name it, so the second finds another turn running and loses (409).
    const seen = arrivedTo ?? (await this.tasks.find(tenantId, taskId));
    // A schedule's run names its message (derived from the schedule and due time): sent twice, it is added once.
    const messageId = givenId ?? newId('msg');
    const message = {
      messageId,
      text,
      ...(maxTokens === undefined ? {} : { maxTokens }),
      ...(maxCostUsd === undefined ? {} : { maxCostUsd }),
    };
    let command: TaskCommand = { type: 'AddUserMessage', data: { ...message, ...(ifRunning === 'reject' ? { ifRunning } : {}) } };
    // No turn running: every value is `enqueue`.
    if ((ifRunning === 'interrupt' || ifRunning === 'rollback') && isTurnRunning(seen.status)) {
      command = await this.interrupt(taskId, seen, message, ifRunning === 'rollback');
    }
    const { position } = await this.commands.execute(taskId, command, { retries: 10 });
    if (position !== undefined) await this.views.waitForPosition(position);
    return { id: taskId, messageId, status: (await this.tasks.find(tenantId, taskId)).status };
  }

  private async interrupt(
    taskId: string,
    seen: TaskView,
    message: Pick<InterruptTurn['data'], 'messageId' | 'text' | 'maxTokens' | 'maxCostUsd'>,
    rollback: boolean,
  ): Promise<InterruptTurn> {
    const awaiting = seen.pendingApprovals.map((p) => p.callId);
    const undo = rollback ? this.turnStart(seen.turn, (await this.commands.load(taskId)).events) : undefined;
    return { type: 'InterruptTurn', data: { ...message, turn: seen.turn, awaiting, ...(undo ? { rollback: undo } : {}) } };
  }

  /**
   * Where the running turn began (its TurnStarted, or a fork's copy of it) and the workspace then:
   * the checkpoint in effect (the last one recorded before it, or brought back by a rollback
   * before it; none: empty), which must still be kept (CHECKPOINT_RETENTION) and must be the
   * workspace as it was (no step after it went unrecorded); and the artifacts then.
   */
  private turnStart(turn: number, events: readonly StoredEvent[]): NonNullable<InterruptTurn['data']['rollback']> {
    const decoded = events.map(toTaskEvent);
    let startIndex = decoded.length - 1;
    while (startIndex >= 0 && !isStartOf(decoded[startIndex], turn)) startIndex--;
    if (startIndex < 0) throw new ConflictError(`turn ${turn} cannot be rolled back: its start is not in the task's history`);
    const fromEventId = events[startIndex].revision;
    const atStartState = decoded.slice(0, startIndex).reduce(evolve, initialTaskState());
    const artifacts = atStartState.exists ? Object.values(atStartState.artifacts) : [];
    const ref = atStartState.exists ? atStartState.lastCheckpoint : undefined;
    let setAt = startIndex - 1;
    while (setAt >= 0 && !setsCheckpoint(decoded[setAt])) setAt--;
    const unrecorded = decoded
      .slice(setAt + 1, startIndex)
      .find((e) => e.type === 'ToolCallFinished' && e.data.checkpointSkipped !== undefined);
    if (unrecorded?.type === 'ToolCallFinished') {
      throw new ConflictError(
        `turn ${turn} cannot be rolled back: the workspace at its start was not recorded (${unrecorded.data.checkpointSkipped}); nothing was changed`,
      );
    }
    if (!ref) return { fromEventId, artifacts };
    const atStart = events[setAt].revision;
    const kept = retainedCheckpoints(checkpointsIn(events), this.checkpointSettings.retention, Date.now());
    if (!kept.some((c) => c.eventId === atStart)) {
      throw new ConflictError(
        `turn ${turn} cannot be rolled back: the workspace as of its start (event ${atStart}) is no longer kept (CHECKPOINT_RETENTION); nothing was changed`,
      );
    }
    return { fromEventId, checkpoint: ref, artifacts };
  }
}

/** The event set the checkpoint in effect after it: a recorded one, or a rollback's (none: empty). */
const setsCheckpoint = (event: TaskEvent): boolean =>
  event.type === 'TurnRolledBack' ||
  ((event.type === 'TaskCreated' || event.type === 'ToolCallFinished') && event.data.checkpoint !== undefined);

const isStartOf = (event: TaskEvent, turn: number): boolean => event.type === 'TurnStarted' && event.data.turn === turn;
