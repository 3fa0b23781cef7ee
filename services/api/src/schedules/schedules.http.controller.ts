import { Body, Controller, Delete, Get, Inject, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { NotFoundError, TaskSecrets, ValidationError, newId } from '@app/common';
import { EVENT_STORE, EventStore } from '@app/event-store';
import type { ScheduleState } from '@app/task-domain';
import { scheduleStreamId } from '@app/task-domain';
import { WebhookConfig, checkWebhookUrl } from '@app/webhooks';
import { ApiConfig } from '../api.config';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Tenant } from '../auth/tenant.decorator';
import { ok } from '../http/envelope';
import { TaskAccess } from '../tasks/task-access';
import { checkTokenBudgetCap } from '../validation/check-token-budget-cap';
import { validateInput } from '../validation/validate-input';
import { checkTimezone, checkedCron } from './cron-rules';
import { ScheduleBook } from './schedule-book';
import { ScheduleFirer } from './schedule-firer';
import { presentSchedule } from './schedule.presenter';
import { CreateScheduleRequestDto, ListSchedulesRequestDto, ScheduleTaskDto, UpdateScheduleRequestDto } from './schedule.request.dto';
import type { ScheduleRun } from './schedule-runs';
import { scheduleRuns } from './schedule-runs';
import { SchedulesConfig } from './schedules.config';

/** Fields a run into a target cannot carry: a follow-up is a message (and a budget), the rest is the target's. */
const NEW_TASK_ONLY = ['autoExecute', 'showInHistory', 'secrets', 'env', 'webhookUrl'] as const;

@ApiTags('schedules')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/schedules')
export class SchedulesHttpController {
  constructor(
    private readonly book: ScheduleBook,
    private readonly firer: ScheduleFirer,
    private readonly config: SchedulesConfig,
    private readonly api: ApiConfig,
    private readonly webhooks: WebhookConfig,
    private readonly secrets: TaskSecrets,
    private readonly tasks: TaskAccess,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create a schedule: a task (or a follow-up into `target`) started at each due time of a cron expression.' })
  @ApiBody({ type: CreateScheduleRequestDto })
  async create(@Tenant() tenantId: string, @Body() body: unknown) {
    const dto = await validateInput(CreateScheduleRequestDto, body);
    const task = await validateInput(ScheduleTaskDto, dto.task).catch((error: unknown) => {
      throw error instanceof ValidationError ? new ValidationError(`task: ${error.message}`) : error;
    });
    const timezone = dto.timezone ?? 'UTC';
    checkedCron(dto.cron, timezone, this.config.minIntervalMs);
    checkTokenBudgetCap(task.maxTokens, this.api.taskMaxTokensCap);
    if (dto.target !== undefined) {
      const given = NEW_TASK_ONLY.filter((field) => task[field] !== undefined);
      if (given.length > 0)
        throw new ValidationError(`task.${given[0]}: a schedule with a target sends follow-ups, which carry only message and maxTokens`);
      await this.tasks.find(tenantId, dto.target); // another tenant's task answers 404, as a missing one
    }
    // Checked now, and again by the create at each run (the allowed hosts may change meanwhile).
    const webhookUrl = task.webhookUrl === undefined ? undefined : checkWebhookUrl(task.webhookUrl, this.webhooks);
    const secrets = task.secrets ?? {};
    const hasSecrets = Object.keys(secrets).length > 0;
    if (hasSecrets && !this.secrets.canSeal) {
      throw new ValidationError(
        'secrets need SECRETS_KEY (or SECRETS_KEY_FILE) to be set on the service: they are stored encrypted with it',
      );
    }
    const scheduleId = newId('sched');
    await this.book.register(scheduleId, tenantId, this.config.maxPerTenant);
    const { state } = await this.book.execute(scheduleId, {
      type: 'CreateSchedule',
      data: {
        scheduleId,
        tenantId,
        cron: dto.cron.trim().split(/\s+/).join(' '),
        timezone,
        task: {
          message: task.message,
          autoExecute: task.autoExecute ?? true,
          showInHistory: task.showInHistory ?? true,
          env: task.env ?? {},
          secretNames: Object.keys(secrets),
          // Sealed for the schedule's id; each run opens it and seals again for its own task.
          ...(hasSecrets ? { sealedSecrets: this.secrets.seal(scheduleId, secrets) } : {}),
          ...(task.maxTokens === undefined ? {} : { maxTokens: task.maxTokens }),
          ...(webhookUrl === undefined ? {} : { webhookUrl }),
        },
        ...(dto.target === undefined ? {} : { target: dto.target }),
        overlap: dto.overlap ?? 'skip',
        paused: dto.paused ?? false,
        at: new Date().toISOString(),
      },
    });
    if (hasSecrets) this.secrets.vault.put(scheduleId, secrets);
    this.firer.track(state);
    return ok(presentSchedule(state));
  }

  @Get()
  @ApiOperation({ summary: "List the caller's schedules, newest first." })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } })
  @ApiQuery({ name: 'cursor', required: false, description: 'the nextCursor of the previous page', schema: { type: 'string' } })
  async list(@Tenant() tenantId: string, @Query() query: Record<string, unknown>) {
    const dto = await validateInput(ListSchedulesRequestDto, { ...query });
    const limit = dto.limit ?? 20;
    const before = dto.cursor === undefined ? Infinity : Number(dto.cursor);
    const entries = (await this.book.registered()).filter((e) => e.tenantId === tenantId && e.revision < before).reverse();
    const page = entries.slice(0, limit);
    const schedules = (await Promise.all(page.map((e) => this.book.load(e.scheduleId)))).filter((s) => s.exists && !s.deleted);
    return ok({
      schedules: schedules.map(presentSchedule),
      nextCursor: entries.length > limit ? String(page[page.length - 1].revision) : null,
    });
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a schedule, with its next and last run times.' })
  async get(@Tenant() tenantId: string, @Param('id') id: string) {
    return ok(presentSchedule(await this.find(tenantId, id)));
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change cron, timezone or overlap, or pause (paused=true) and resume (paused=false).' })
  @ApiBody({ type: UpdateScheduleRequestDto })
  async update(@Tenant() tenantId: string, @Param('id') id: string, @Body() body: unknown) {
    const dto = await validateInput(UpdateScheduleRequestDto, body);
    const current = await this.find(tenantId, id);
    if (dto.timezone !== undefined) checkTimezone(dto.timezone);
    if (dto.cron !== undefined || dto.timezone !== undefined)
      checkedCron(dto.cron ?? current.cron, dto.timezone ?? current.timezone, this.config.minIntervalMs);
    const { state } = await this.book.execute(
      id,
      {
        type: 'UpdateSchedule',
        data: {
          ...(dto.cron === undefined ? {} : { cron: dto.cron.trim().split(/\s+/).join(' ') }),
          ...(dto.timezone === undefined ? {} : { timezone: dto.timezone }),
          ...(dto.overlap === undefined ? {} : { overlap: dto.overlap }),
          ...(dto.paused === undefined ? {} : { paused: dto.paused }),
          at: new Date().toISOString(),
        },
      },
      10,
    );
    this.firer.track(state);
    return ok(presentSchedule(state));
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Delete a schedule: no run after this; its runs stay readable by their tasks.' })
  async remove(@Tenant() tenantId: string, @Param('id') id: string) {
    await this.find(tenantId, id);
    const { state } = await this.book.execute(id, { type: 'DeleteSchedule', data: { at: new Date().toISOString() } }, 10);
    await this.book.unregister(id);
    this.firer.track(state);
    return ok({ id, deleted: true as const });
  }

  @Get(':id/runs')
  @ApiOperation({ summary: "A schedule's runs, newest first: each due time started, skipped (and why) or failed (and why)." })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } })
  @ApiQuery({ name: 'cursor', required: false, description: 'the nextCursor of the previous page', schema: { type: 'string' } })
  async runs(@Tenant() tenantId: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    const dto = await validateInput(ListSchedulesRequestDto, { ...query });
    const state = await this.find(tenantId, id);
    const limit = dto.limit ?? 20;
    const newest = dto.cursor === undefined ? state.revision : Math.min(Number(dto.cursor) - 1, state.revision);
    // Read back from the newest run asked for, in growing windows, never the whole history of a
    // schedule that has run every minute for months. A window is read to the stream's end, where
    // a failure of one of its runs is recorded.
    const runsFrom = async (from: number): Promise<ScheduleRun[]> =>
      scheduleRuns(await this.store.readStream(scheduleStreamId(id), { fromRevision: from })).filter((r) => r.revision <= newest);
    let size = limit * 2 + 8;
    let runs = await runsFrom(Math.max(1, newest - size + 1));
    while (runs.length <= limit && newest - size + 1 > 1) {
      size *= 4;
      runs = await runsFrom(Math.max(1, newest - size + 1));
    }
    const page = runs.reverse().slice(0, limit);
    return ok({
      runs: page.map(({ revision: _cursor, ...run }) => run),
      nextCursor: runs.length > limit ? String(page[page.length - 1].revision) : null,
    });
  }

  /** Another tenant's schedule is indistinguishable from a missing one. */
  private async find(tenantId: string, id: string): Promise<ScheduleState> {
    if (!/^sched_[a-f0-9]{32}$/.test(id)) throw new NotFoundError('schedule');
    const state = await this.book.load(id);
    if (!state.exists || state.deleted || state.tenantId !== tenantId) throw new NotFoundError('schedule');
    return state;
  }
}
