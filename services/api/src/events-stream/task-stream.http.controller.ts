import { Controller, Get, Headers, Inject, Param, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
// A type only: `import type` keeps fastify out of the compiled code's requires (SWC cannot tell an interface from a class).
import type { FastifyReply } from 'fastify';
import { ValidationError, taskStreamId } from '@app/common';
import { EVENT_STORE, EventStore } from '@app/event-store';
import { ServiceMetrics } from '@app/metrics';
import { isTurnActive } from '@app/task-domain';
import { ApiConfig } from '../api.config';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Tenant } from '../auth/tenant.decorator';
import { TaskAccess } from '../tasks/task-access';
import { OpenStreams } from './open-streams';
import { SSE_HEADERS, SseSession } from './sse-session';
import { TaskEventFeed } from './task-event-feed';

const EVENT_ID = /^(0|[1-9][0-9]{0,15})$/;

@ApiTags('stream')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class TaskStreamHttpController {
  constructor(
    private readonly tasks: TaskAccess,
    private readonly feed: TaskEventFeed,
    private readonly config: ApiConfig,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly metrics: ServiceMetrics,
    private readonly openStreams: OpenStreams,
  ) {}

  @Get(':id/stream')
  @ApiOperation({
    summary: 'Follow a task over Server-Sent Events',
    description:
      "Replays the latest turn from its start, then follows live, and ends after that turn's `done`. " +
      '`Last-Event-ID` or `?after=<id>` resumes right after that event (`after=0`: the whole history). ' +
      'Opened when no turn runs, it sends what follows `after` and ends. Keep-alive comments every 15 s. ' +
      'An instance shutting down ends its streams with the comment `: shutting down, reconnect with Last-Event-ID`.',
  })
  @ApiProduces('text/event-stream')
  @ApiQuery({
    name: 'after',
    required: false,
    description: 'send the events after this event id (0: the whole history); by default the latest turn from its start',
    schema: { type: 'string', pattern: EVENT_ID.source },
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'the same as `after`, as an SSE client sends it on reconnecting; wins over `after` when both are sent',
    schema: { type: 'string', pattern: EVENT_ID.source },
  })
  async stream(
    @Tenant() tenantId: string,
    @Param('id') id: string,
    @Query('after') afterQuery: string | undefined,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const view = await this.tasks.find(tenantId, id);
    const resumeFrom = lastEventId ?? afterQuery;
    if (resumeFrom !== undefined && !EVENT_ID.test(resumeFrom)) {
      throw new ValidationError(`${lastEventId !== undefined ? 'Last-Event-ID' : 'after'} must be an event id (a non-negative integer)`);
    }
    const after = resumeFrom === undefined ? view.turnStartEventId - 1 : Number(resumeFrom);
    reply.hijack();
    // HEAD: the headers, and the end. Node holds a bodiless answer's headers until it ends, and
    // the stream of a running turn does not end: a session would never have answered it.
    if (reply.request.method === 'HEAD') return void reply.raw.writeHead(200, SSE_HEADERS).end();
    this.metrics.sseConnections.inc();
    reply.raw.once('close', () => this.metrics.sseConnections.dec());
    const session = new SseSession(reply.raw, this.store, this.feed, this.openStreams, {
      streamId: taskStreamId(id),
      after,
      untilTurn: isTurnActive(view.status) ? view.turn : undefined,
      keepAliveMs: this.config.sseKeepAliveMs,
    });
    await session.start();
  }
}
