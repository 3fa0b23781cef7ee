import { Controller, HttpCode, Inject, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { EVENT_STORE, EventStore } from '@app/event-store';
import { requestWebhookRedelivery } from '@app/webhooks';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { ok } from '../../http/envelope';
import { TaskAccess } from '../task-access';

@ApiTags('tasks')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class RedeliverWebhookHttpController {
  constructor(
    private readonly tasks: TaskAccess,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Post(':id/webhook-deliveries/:deliveryId/redeliver')
  // Accepted, not done: the dispatcher (in the orchestrator) makes the attempts.
  @HttpCode(202)
  @ApiOperation({
    summary: 'Send a delivered or failed webhook message again: a new round of attempts, starting now.',
    description:
      'Replays a missed message: the same webhook-id and body, signed again with a new webhook-timestamp, retried as a new message is ' +
      '(up to WEBHOOK_MAX_ATTEMPTS attempts of its own). The delivery is pending until the round ends; its new attempts follow the ' +
      'earlier ones in GET /api/v1/tasks/{id}/webhook-deliveries. A message still pending, or redelivered 10 times already, ' +
      'answers 409.',
  })
  async redeliver(@Tenant() tenantId: string, @Param('id') id: string, @Param('deliveryId') deliveryId: string) {
    await this.tasks.find(tenantId, id);
    return ok(await requestWebhookRedelivery(this.store, id, deliveryId));
  }
}
