import { Controller, Get, Inject, Param, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
// A type only: `import type` keeps fastify out of the compiled code's requires (SWC cannot tell an interface from a class).
import type { FastifyReply } from 'fastify';
import { ValidationError } from '@app/common';
import { ListArtifactsReply, ListArtifactsRequest, LocateArtifactReply, LocateArtifactRequest, SUBJECTS } from '@app/contracts';
import { DEFAULT_REQUEST_TIMEOUT_MS, MESSAGE_BUS, MessageBus, requestUntilDelivered } from '@app/bus';
import { OBJECT_STORE, ObjectStore } from '@app/object-store';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Tenant } from '../auth/tenant.decorator';
import { TaskAccess } from '../tasks/task-access';
import { contentDisposition } from '../http/content-disposition';

@ApiTags('artifacts')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class ArtifactsHttpController {
  constructor(
    private readonly tasks: TaskAccess,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(OBJECT_STORE) private readonly objects: ObjectStore,
  ) {}

  @Get(':id/artifacts')
  @ApiOperation({ summary: 'List the files the agent wrote under downloads/ (no envelope: `files` at the top level).' })
  async list(@Tenant() tenantId: string, @Param('id') id: string): Promise<ListArtifactsReply> {
    await this.tasks.find(tenantId, id);
    const { files } = await this.ask<ListArtifactsRequest, ListArtifactsReply>(SUBJECTS.artifactsList, { taskId: id });
    return { files };
  }

  @Get(':id/artifacts/download')
  @ApiOperation({
    summary:
      'Download one artifact: raw bytes, Content-Type by extension, X-Content-Type-Options: nosniff, Content-Disposition: attachment.',
  })
  @ApiProduces('application/octet-stream')
  @ApiQuery({
    name: 'path',
    required: true,
    description: 'the `path` of an artifact record, e.g. downloads/report.md',
    schema: { type: 'string', minLength: 1 },
  })
  async download(
    @Tenant() tenantId: string,
    @Param('id') id: string,
    @Query('path') path: unknown,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.tasks.find(tenantId, id);
    if (typeof path !== 'string' || path === '') throw new ValidationError('path is required: the path of an artifact record');
    const { file, objectKey } = await this.ask<LocateArtifactRequest, LocateArtifactReply>(SUBJECTS.artifactsLocate, { taskId: id, path });
    // Streamed from the object store: a large file is never held in memory.
    const body = await this.objects.get(objectKey);
    void reply
      .header('content-type', file.mimeType)
      // The type is the extension's: a browser must not guess HTML or script from what the agent wrote.
      .header('x-content-type-options', 'nosniff')
      .header('content-length', String(file.size))
      .header('content-disposition', contentDisposition(file.name))
      .send(body);
  }

  /** Reads are safe to resend: a NATS reconnect or an artifacts restart delays the answer, not fails it. */
  private ask<Req, Res>(subject: string, request: Req): Promise<Res> {
    return requestUntilDelivered<Req, Res>(this.bus, subject, request, { timeoutMs: DEFAULT_REQUEST_TIMEOUT_MS });
  }
}
