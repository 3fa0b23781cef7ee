import { Controller, Get, Logger, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Readiness, ServiceMetrics, readinessBody } from '@app/metrics';

/** Liveness, readiness and metrics: for orchestrators and Prometheus, so none of them needs an API key. */
@ApiTags('health')
@Controller()
export class HealthController {
  private readonly logger = new Logger('Health');

  constructor(
    private readonly readiness: Readiness,
    private readonly metrics: ServiceMetrics,
  ) {}

  @Get('healthz')
  @ApiOperation({ summary: 'Answers 200 {"status":"ok"} once the service accepts tasks (no auth).' })
  health() {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({
    summary: "Answers 200 when this instance's dependencies answer, 503 naming the one that does not (no auth).",
  })
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const report = await this.readiness.report();
    for (const [name, reason] of Object.entries(report.reasons)) this.logger.warn(`not ready: ${name} is down: ${reason}`);
    void reply.status(report.ready ? 200 : 503);
    return readinessBody(report);
  }

  @Get('metrics')
  @ApiOperation({ summary: 'The Prometheus text exposition of this process’s metrics (no auth).' })
  async scrape(@Res({ passthrough: true }) reply: FastifyReply) {
    const { contentType, body } = await this.metrics.exposition();
    void reply.header('content-type', contentType);
    return body;
  }
}
