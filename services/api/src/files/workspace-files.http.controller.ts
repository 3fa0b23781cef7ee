import { Controller, Get, Inject, Param, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
// A type only: `import type` keeps fastify out of the compiled code's requires.
import type { FastifyReply } from 'fastify';
import { NotFoundError, ValidationError } from '@app/common';
import { CheckpointReader, rootEntryOf } from '@app/checkpoints';
import { OBJECT_STORE, ObjectStore } from '@app/object-store';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Tenant } from '../auth/tenant.decorator';
import { ok } from '../http/envelope';
import { TaskAccess } from '../tasks/task-access';
import { validateInput } from '../validation/validate-input';
import { contentDisposition } from '../http/content-disposition';
import { WorkspaceAtEvent } from './workspace-at-event';
import { DEFAULT_FILES_PAGE, DownloadWorkspaceFileRequestDto, ListWorkspaceFilesRequestDto } from './workspace-files.request.dto';

/**
 * The workspace as it was right after any event of the task (docs/api.md "Time travel"): its
 * files listed page by page, and one file's bytes, read from the checkpoint the history names
 * for that moment. Nothing here touches a sandbox: it works for a task whose sandbox is gone.
 */
@ApiTags('files')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class WorkspaceFilesHttpController {
  private readonly reader: CheckpointReader;

  constructor(
    private readonly tasks: TaskAccess,
    private readonly workspaces: WorkspaceAtEvent,
    @Inject(OBJECT_STORE) objects: ObjectStore,
  ) {
    this.reader = new CheckpointReader(objects);
  }

  @Get(':id/files')
  @ApiOperation({ summary: 'List the workspace files as they were right after an event (default: now), a page at a time.' })
  async list(@Tenant() tenantId: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    await this.tasks.find(tenantId, id);
    const dto = await validateInput(ListWorkspaceFilesRequestDto, { ...query });
    const { at, checkpoint } = await this.workspaces.find(id, dto.at === undefined ? undefined : Number(dto.at));
    if (!checkpoint) return ok({ at, files: [], nextCursor: null });
    const page = await this.reader.files(rootEntryOf(checkpoint), dto.limit ?? DEFAULT_FILES_PAGE, afterCursor(dto.cursor));
    return ok({ at, files: page.files, nextCursor: page.next === undefined ? null : cursorOf(page.next) });
  }

  @Get(':id/files/download')
  @ApiOperation({ summary: 'One workspace file as it was right after an event (default: now): raw bytes, as an attachment.' })
  @ApiProduces('application/octet-stream')
  async download(@Tenant() tenantId: string, @Param('id') id: string, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply) {
    await this.tasks.find(tenantId, id);
    const dto = await validateInput(DownloadWorkspaceFileRequestDto, { ...query });
    const { checkpoint } = await this.workspaces.find(id, dto.at === undefined ? undefined : Number(dto.at));
    const entry = checkpoint && (await this.reader.find(rootEntryOf(checkpoint), dto.path));
    if (entry?.kind !== 'file') throw new NotFoundError('file');
    const body = await this.reader.open(entry);
    void reply
      .header('content-type', 'application/octet-stream')
      .header('x-content-type-options', 'nosniff')
      .header('content-length', String(entry.size))
      .header('content-disposition', contentDisposition(entry.name))
      .send(body);
  }
}

/** Cursors are opaque to callers: the last path of the page, encoded. */
function cursorOf(path: string): string {
  return Buffer.from(path, 'utf8').toString('base64url');
}

function afterCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const path = Buffer.from(cursor, 'base64url').toString('utf8');
  if (path === '' || cursorOf(path) !== cursor) throw new ValidationError('cursor must be a nextCursor from a previous page');
  return path;
}
