import { Body, Controller, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { TaskSecrets, ValidationError, newId } from '@app/common';
import { WebhookConfig, checkWebhookUrl } from '@app/webhooks';
import { ApiConfig } from '../../api.config';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { ok } from '../../http/envelope';
import { TaskAccess } from '../../tasks/task-access';
import { checkTokenBudgetCap } from '../../validation/check-token-budget-cap';
import { validateInput } from '../../validation/validate-input';
import { checkedCron } from '../cron-rules';
import { ScheduleBook } from '../schedule-book';
import { ScheduleFirer } from '../schedule-firer';
import { presentSchedule } from '../schedule.presenter';
import { SchedulesConfig } from '../schedules.config';
import { CreateScheduleRequestDto, ScheduleTaskDto } from './create-schedule.request.dto';

/** Fields a run into a target cannot carry: a follow-up is a message (and a budget), the rest is the target's. */
const NEW_TASK_ONLY = ['autoExecute', 'showInHistory', 'secrets', 'env', 'webhookUrl'] as const;

@ApiTags('schedules')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/schedules')
export class CreateScheduleHttpController {
  constructor(
    private readonly book: ScheduleBook,
    private readonly firer: ScheduleFirer,
    private readonly config: SchedulesConfig,
    private readonly api: ApiConfig,
    private readonly webhooks: WebhookConfig,
    private readonly secrets: TaskSecrets,
    private readonly tasks: TaskAccess,
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
        throw new ValidationError(
          `task.${given[0]}: a schedule with a target sends follow-ups, which carry only message, maxTokens and maxCostUsd`,
        );
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
          ...(task.maxCostUsd === undefined ? {} : { maxCostUsd: task.maxCostUsd }),
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
}
