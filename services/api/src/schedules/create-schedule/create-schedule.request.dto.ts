import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import type { ScheduleOverlap } from '@app/task-domain';
import { CreateTaskRequestDto } from '../../tasks/create-task/create-task.request.dto';
import { IsWellFormedText } from '../../validation/is-well-formed-text';
import { MAX_CRON_LENGTH, MAX_TIMEZONE_LENGTH } from '../cron-rules';

export const OVERLAPS: readonly ScheduleOverlap[] = ['skip', 'enqueue'];

/** What each run starts: the create-task fields a schedule keeps (no uploads, MCP servers or network). */
export class ScheduleTaskDto extends PickType(CreateTaskRequestDto, [
  'message',
  'autoExecute',
  'showInHistory',
  'maxTokens',
  'maxCostUsd',
  'secrets',
  'env',
  'webhookUrl',
] as const) {}

export const CRON_DESCRIPTION =
  '5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; names (MON, JAN), ranges, steps, lists, L, W and # as croner reads them. ' +
  'Runs must be at least SCHEDULE_MIN_INTERVAL_MS apart.';
export const TIMEZONE_DESCRIPTION = 'IANA time zone the cron is read in (DST included).';
export const OVERLAP_DESCRIPTION =
  '`skip`: a due time whose previous run (its task, or the target) is still active is recorded as skipped. `enqueue`: it starts anyway ' +
  '(a new task; for a target, a follow-up that waits its turn).';

export class CreateScheduleRequestDto {
  @ApiProperty({ example: '0 9 * * MON-FRI', maxLength: MAX_CRON_LENGTH, description: CRON_DESCRIPTION })
  @IsString()
  @MaxLength(MAX_CRON_LENGTH)
  @IsWellFormedText()
  readonly cron!: string;

  @ApiPropertyOptional({ example: 'Europe/Paris', default: 'UTC', maxLength: MAX_TIMEZONE_LENGTH, description: TIMEZONE_DESCRIPTION })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_TIMEZONE_LENGTH)
  readonly timezone?: string;

  @ApiProperty({
    type: () => ScheduleTaskDto,
    description: 'The task each run creates (with `target`: only `message`, `maxTokens` and `maxCostUsd`, sent as a follow-up).',
  })
  @IsObject()
  readonly task!: Record<string, unknown>;

  @ApiPropertyOptional({
    example: 'task_3f9c2a7e5b1d4c8f9a0e6b2d7c4f1a95',
    description: 'A task of the caller: each run is a follow-up into it instead of a new task.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  readonly target?: string;

  @ApiPropertyOptional({ enum: OVERLAPS, default: 'skip', description: OVERLAP_DESCRIPTION })
  @IsOptional()
  @IsIn(OVERLAPS)
  readonly overlap?: ScheduleOverlap;

  @ApiPropertyOptional({ default: false, description: 'true: created paused (no run until resumed with PATCH paused=false).' })
  @IsOptional()
  @IsBoolean()
  readonly paused?: boolean;
}
