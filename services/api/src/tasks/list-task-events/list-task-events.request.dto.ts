import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';

export const DEFAULT_EVENTS_PAGE = 200;
export const MAX_EVENTS_PAGE = 1000;

export class ListTaskEventsRequestDto {
  @ApiPropertyOptional({ description: 'list the events after this event id (0: from the first); a nextAfter value', default: '0' })
  @IsOptional()
  @Matches(/^(0|[1-9][0-9]{0,15})$/, { message: 'after must be an event id (a non-negative integer)' })
  readonly after?: string;

  @ApiPropertyOptional({ default: DEFAULT_EVENTS_PAGE, minimum: 1, maximum: MAX_EVENTS_PAGE })
  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? value : Number(value)))
  @IsInt()
  @Min(1)
  @Max(MAX_EVENTS_PAGE)
  readonly limit?: number;
}
