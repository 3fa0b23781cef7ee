import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { MAX_MESSAGE_LENGTH } from '../../tasks/create-task/create-task.request.dto';
import { IsWellFormedText } from '../../validation/is-well-formed-text';

export class SendFollowUpRequestDto {
  @ApiProperty({ example: 'Now add a chart of the totals.' })
  @IsString()
  @IsNotEmpty({ message: 'message must be a non-empty string' })
  @MaxLength(MAX_MESSAGE_LENGTH)
  @IsWellFormedText()
  readonly message: string;
}
