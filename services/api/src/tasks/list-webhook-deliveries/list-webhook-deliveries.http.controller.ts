import { Controller, Get, Inject, Param, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { EVENT_STORE, EventStore } from '@app/event-store';
import { maskOperatorUrl, projectDeliveries, readWebhookOutbox } from '@app/webhooks';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { ok } from '../../http/envelope';
import { TaskAccess } from '../task-access';

@ApiTags('tasks')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class ListWebhookDeliveriesHttpController {
  constructor(
    private readonly tasks: TaskAccess,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Get(':id/webhook-deliveries')
  @ApiOperation({ summary: "The task's webhook messages and every attempt to deliver each, oldest first." })
  async list(@Tenant() tenantId: string, @Param('id') id: string) {
    await this.tasks.find(tenantId, id);
    // Read from the store, not a view: the attempts are recorded there, and this page is an audit trail.
    const { messages, deliveryEvents, operatorUrl } = await readWebhookOutbox(this.store, id);
    const deliveries = projectDeliveries(
      messages.map((m) => ({ id: m.id, type: m.payload.type })),
      deliveryEvents,
    );
    // The operator's WEBHOOK_URL is never shown, not even the host an attempt's error names.
    return ok({ deliveries: operatorUrl === undefined ? deliveries : deliveries.map((d) => maskOperatorUrl(d, operatorUrl)) });
  }
}
