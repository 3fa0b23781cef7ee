import { ApiProperty } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { ApprovalOutcome } from '@app/task-domain';

export const OUTCOMES: readonly ApprovalOutcome[] = ['proceed_once', 'proceed_always', 'cancel'];

export class ApproveToolCallRequestDto {
  @ApiProperty({ enum: OUTCOMES })
  @IsIn(OUTCOMES, { message: `outcome must be one of ${OUTCOMES.join(', ')}` })
  readonly outcome: ApprovalOutcome;
}
