import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';

@ApiTags('health')
@Controller()
export class HealthController {
  @Get('healthz')
  @ApiOperation({ summary: 'Answers 200 {"status":"ok"} once the service accepts tasks (no auth).' })
  health() {
    return { status: 'ok' };
  }
}
