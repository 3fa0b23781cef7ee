import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { MAX_MESSAGE_LENGTH } from '../../tasks/create-task/create-task.request.dto';
import { IsNotBlank } from '../../validation/is-not-blank';
import { IsCostBudget } from '../../validation/is-cost-budget';
import { IsTokenBudget } from '../../validation/is-token-budget';
import { IsWellFormedText } from '../../validation/is-well-formed-text';

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
}
