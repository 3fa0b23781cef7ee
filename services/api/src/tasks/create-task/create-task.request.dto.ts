import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { MIN_SECRET_LENGTH } from '@app/common';
import { IsStringRecord } from '../../validation/is-string-record';

export const MAX_MESSAGE_LENGTH = 100_000;

export class CreateTaskRequestDto {
  @ApiProperty({ description: 'The instruction for the agent.', example: 'Summarise data.csv into downloads/report.md' })
  @IsString()
  @IsNotEmpty({ message: 'message must be a non-empty string' })
  @MaxLength(MAX_MESSAGE_LENGTH)
  readonly message: string;

  @ApiPropertyOptional({ default: true, description: 'false: every tool call waits for approval.' })
  @IsOptional()
  @IsBoolean()
  readonly autoExecute?: boolean;

  @ApiPropertyOptional({ default: true, description: 'false: kept out of the task list unless includeHidden=true.' })
  @IsOptional()
  @IsBoolean()
  readonly showInHistory?: boolean;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: `Credentials for this task only, as environment variables; never stored, logged or returned. Values of at least ${MIN_SECRET_LENGTH} characters. In multipart: a JSON-encoded text field.`,
  })
  @IsOptional()
  @IsStringRecord({ maxEntries: 50, maxValueLength: 16_384, minValueLength: MIN_SECRET_LENGTH })
  readonly secrets?: Record<string, string>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Environment values for the task. GET shows only their keys. In multipart: a JSON-encoded text field.',
  })
  @IsOptional()
  @IsStringRecord({ maxEntries: 100, maxValueLength: 32_768 })
  readonly env?: Record<string, string>;
}
