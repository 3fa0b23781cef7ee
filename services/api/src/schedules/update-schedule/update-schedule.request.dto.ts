import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import type { ScheduleOverlap } from '@app/task-domain';
import { IsWellFormedText } from '../../validation/is-well-formed-text';
import { MAX_CRON_LENGTH, MAX_TIMEZONE_LENGTH } from '../cron-rules';
import { CRON_DESCRIPTION, OVERLAPS, OVERLAP_DESCRIPTION, TIMEZONE_DESCRIPTION } from '../create-schedule/create-schedule.request.dto';

export class UpdateScheduleRequestDto {
  @ApiPropertyOptional({
    example: '*/15 * * * *',
    maxLength: MAX_CRON_LENGTH,
    description: `${CRON_DESCRIPTION} Due times are counted anew from the change.`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_CRON_LENGTH)
  @IsWellFormedText()
  readonly cron?: string;

  @ApiPropertyOptional({ example: 'UTC', maxLength: MAX_TIMEZONE_LENGTH, description: TIMEZONE_DESCRIPTION })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_TIMEZONE_LENGTH)
  readonly timezone?: string;

  @ApiPropertyOptional({ enum: OVERLAPS, description: OVERLAP_DESCRIPTION })
  @IsOptional()
  @IsIn(OVERLAPS)
  readonly overlap?: ScheduleOverlap;

  @ApiPropertyOptional({ description: 'true: pause; false: resume (due times while paused are neither run nor recorded).' })
  @IsOptional()
  @IsBoolean()
  readonly paused?: boolean;
}
