import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional } from 'class-validator';
import { PageRequestDto } from '../../http/page.request.dto';

export class ListTasksRequestDto extends PageRequestDto {
  @ApiPropertyOptional({ default: false, description: 'include tasks created with showInHistory=false' })
  @IsOptional()
  @Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  readonly includeHidden?: boolean;
}
