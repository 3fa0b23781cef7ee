import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsOptional, IsString, MaxLength } from 'class-validator';
import { MAX_MESSAGE_LENGTH } from '../create-task/create-task.request.dto';
import { IsNotBlank } from '../../validation/is-not-blank';
import { IsWellFormedText } from '../../validation/is-well-formed-text';

export class ForkTaskRequestDto {
  @ApiProperty({
    type: 'integer',
    example: 12,
    description:
      'The id of the event to fork after (as GET /tasks/{id}/events and the stream number them): a `message`, a `tool_result` or a `done`. ' +
      'An id the task does not have: 404; another kind of event: 409, naming the nearest ids that can be forked from.',
  })
  // Only the type here: whether the task has such an event is the domain's to say (404, not 400).
  @IsInt()
  readonly afterEventId: number;

  @ApiPropertyOptional({
    example: 'Try it with the other data set.',
    description: 'Only for a fork after a `done`: starts a turn with this message, as a follow-up would (recorded in the fork).',
  })
  @IsOptional()
  @IsString()
  @IsNotBlank()
  @MaxLength(MAX_MESSAGE_LENGTH)
  @IsWellFormedText()
  readonly message?: string;

  @ApiPropertyOptional({ description: "The fork's autoExecute; absent: the source's (as it was at afterEventId)." })
  @IsOptional()
  @IsBoolean()
  readonly autoExecute?: boolean;
}
