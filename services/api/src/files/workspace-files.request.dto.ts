import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';

export const DEFAULT_FILES_PAGE = 200;
export const MAX_FILES_PAGE = 1000;
const EVENT_ID = /^[1-9][0-9]{0,15}$/;

/** `at`: the workspace as it was right after this event; absent: after the last one. */
class AtEvent {
  @ApiPropertyOptional({ description: 'an event id: the workspace right after that event (default: now)' })
  @IsOptional()
  @Matches(EVENT_ID, { message: 'at must be an event id (a positive integer)' })
  readonly at?: string;
}

export class ListWorkspaceFilesRequestDto extends AtEvent {
  @ApiPropertyOptional({ default: DEFAULT_FILES_PAGE, minimum: 1, maximum: MAX_FILES_PAGE })
  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? value : Number(value)))
  @IsInt()
  @Min(1)
  @Max(MAX_FILES_PAGE)
  readonly limit?: number;

  @ApiPropertyOptional({ description: 'the nextCursor of the previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(8192)
  readonly cursor?: string;
}

export class DownloadWorkspaceFileRequestDto extends AtEvent {
  @IsString({ message: 'path is required: a path from the files list' })
  @MinLength(1, { message: 'path is required: a path from the files list' })
  @MaxLength(4096)
  readonly path!: string;
}
