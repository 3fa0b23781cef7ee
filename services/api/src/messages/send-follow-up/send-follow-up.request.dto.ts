import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength, ValidateIf } from 'class-validator';
import { MAX_MESSAGE_LENGTH } from '../../tasks/create-task/create-task.request.dto';
import { IsNotBlank } from '../../validation/is-not-blank';
import { IsCostBudget } from '../../validation/is-cost-budget';
import { IsTokenBudget } from '../../validation/is-token-budget';
import { IsWellFormedText } from '../../validation/is-well-formed-text';

export const IF_RUNNING = ['enqueue', 'reject', 'interrupt', 'rollback'] as const;
export type IfRunning = (typeof IF_RUNNING)[number];

export class SendFollowUpRequestDto {
  @ApiProperty({ example: 'Now add a chart of the totals.' })
  @IsString()
  @IsNotBlank()
  @MaxLength(MAX_MESSAGE_LENGTH)
  @IsWellFormedText()
  readonly message: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    example: 400000,
    description:
      "The task's token budget (total tokens over all turns) from now on: raise it to let a task that reached its maxTokens go on. " +
      'At most TASK_MAX_TOKENS_CAP when the service sets one.',
  })
  @IsTokenBudget()
  readonly maxTokens?: number;

  @ApiPropertyOptional({
    type: 'number',
    minimum: 0,
    maximum: 1e9,
    example: 5,
    description:
      "More than 0: the task's cost budget (USD over all turns) from now on: raise it to let a task that reached its maxCostUsd go on.",
  })
  @IsCostBudget()
  readonly maxCostUsd?: number;

  @ApiPropertyOptional({
    enum: IF_RUNNING,
    default: 'enqueue',
    description:
      'What to do when a turn is running: `enqueue` the message behind it; `reject` it (409, nothing recorded); `interrupt` the turn ' +
      '(stopped as a cancel stops it, `done` with `reason: "interrupted"`) and start this message\'s turn at once; `rollback`: interrupt, ' +
      "then undo the turn (workspace back to its checkpoint at the turn's start, the turn left out of the model's context, a " +
      '`rolled_back` event). With no turn running, every value is `enqueue`.',
  })
  // Absent is `enqueue`; null is a wrong value, not an absent one.
  @ValidateIf((dto: SendFollowUpRequestDto) => dto.ifRunning !== undefined)
  @IsIn(IF_RUNNING, { message: `ifRunning must be one of ${IF_RUNNING.join(', ')}` })
  readonly ifRunning?: IfRunning;
}
