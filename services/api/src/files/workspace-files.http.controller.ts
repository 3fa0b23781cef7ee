import { Controller, Get, Inject, Param, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
// A type only: `import type` keeps fastify out of the compiled code's requires.
import type { FastifyReply } from 'fastify';
import { NotFoundError, TaskSecrets, ValidationError } from '@app/common';
import { TaskCommandExecutor } from '@app/task-commands';
import type { TreeEntry } from '@app/task-domain';
import { CheckpointReader, rootEntryOf } from '@app/checkpoints';
import { OBJECT_STORE, ObjectStore } from '@app/object-store';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Tenant } from '../auth/tenant.decorator';
import { ok } from '../http/envelope';
import { TaskAccess } from '../tasks/task-access';
import { validateInput } from '../validation/validate-input';
import { contentDisposition } from '../http/content-disposition';
import { WorkspaceAtEvent } from './workspace-at-event';
import {
  DEFAULT_FILES_PAGE,
  DownloadWorkspaceFileRequestDto,
  ListWorkspaceFilesRequestDto,
  MAX_FILES_PAGE,
} from './workspace-files.request.dto';

const AT_QUERY = {
  name: 'at',
  required: false,
  description: 'an event id: the workspace as it was right after that event (default: after the last one)',
  schema: { type: 'string' as const, pattern: '^[1-9][0-9]{0,15}$' },
};

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
    private readonly commands: TaskCommandExecutor,
    private readonly secrets: TaskSecrets,
    @Inject(OBJECT_STORE) objects: ObjectStore,
  ) {
    this.reader = new CheckpointReader(objects);
  }

  @Get(':id/files')
  @ApiOperation({ summary: 'List the workspace files as they were right after an event (default: now), a page at a time.' })
  @ApiQuery(AT_QUERY)
  @ApiQuery({
    name: 'limit',
    required: false,
    description: 'page size',
    schema: { type: 'integer', minimum: 1, maximum: MAX_FILES_PAGE, default: DEFAULT_FILES_PAGE },
  })
  @ApiQuery({ name: 'cursor', required: false, description: 'the nextCursor of the previous page', schema: { type: 'string' } })
  async list(@Tenant() tenantId: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    await this.tasks.find(tenantId, id);
    const dto = await validateInput(ListWorkspaceFilesRequestDto, { ...query });
    const after = afterCursor(dto.cursor);
    const { at, checkpoint } = await this.workspaces.find(id, dto.at === undefined ? undefined : Number(dto.at));
    if (!checkpoint) return ok({ at, files: [], nextCursor: null });
    const page = await this.reader.files(rootEntryOf(checkpoint), dto.limit ?? DEFAULT_FILES_PAGE, after);
    const mask = await this.masker(id);
    const files = page.files.map((f) => ({ ...f, path: mask(f.path) }));
    return ok({ at, files, nextCursor: page.next === undefined ? null : cursorOf(page.next) });
  }

  @Get(':id/files/download')
  @ApiOperation({ summary: 'One workspace file as it was right after an event (default: now): raw bytes, as an attachment.' })
  @ApiProduces('application/octet-stream')
  @ApiQuery(AT_QUERY)
  @ApiQuery({ name: 'path', required: true, description: 'a `path` from the files list', schema: { type: 'string', minLength: 1 } })
  async download(@Tenant() tenantId: string, @Param('id') id: string, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply) {
    await this.tasks.find(tenantId, id);
    const dto = await validateInput(DownloadWorkspaceFileRequestDto, { ...query });
    const { checkpoint } = await this.workspaces.find(id, dto.at === undefined ? undefined : Number(dto.at));
    const entry = checkpoint && (await this.fileAt(rootEntryOf(checkpoint), dto.path, await this.masker(id)));
    if (entry?.kind !== 'file') throw new NotFoundError('file');
    const body = await this.reader.open(entry);
    void reply
      .header('content-type', 'application/octet-stream')
      .header('x-content-type-options', 'nosniff')
      .header('content-length', String(entry.size))
      .header('content-disposition', contentDisposition(entry.name))
      .send(body);
  }

  /**
   * A secret's value in a path is masked, as everywhere else (docs/api.md "Secrets and env"):
   * the list shows the masked path, and that is the one to download the file by.
   */
  private async masker(taskId: string): Promise<(path: string) => string> {
    const { state } = await this.commands.load(taskId);
    return (path) => this.secrets.redact(taskId, path, state.exists ? state : undefined);
  }

  /** The file at `path`, or the one whose masked path it is (a walk: masked paths are rare). */
  private async fileAt(root: TreeEntry, path: string, mask: (path: string) => string): Promise<TreeEntry | undefined> {
    const exact = await this.reader.find(root, path);
    if (exact && mask(path) === path) return exact;
    for await (const walked of this.reader.walk(root)) if (walked.entry.kind === 'file' && mask(walked.path) === path) return walked.entry;
    return undefined;
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
