import { Module } from '@nestjs/common';
import { RUNTIME_ENV } from '@app/runtime';
import { WebhookConfig } from '@app/webhooks';
import { AgentRunnerService } from './agent-loop/agent-runner.service';
import { WebhookDispatcherService } from './webhooks/webhook-dispatcher.service';

/** The agent loop: turns task events into model calls and tool runs; and the webhook outbox's dispatcher. */
@Module({
  providers: [
    AgentRunnerService,
    { provide: WebhookConfig, inject: [RUNTIME_ENV], useFactory: (env: NodeJS.ProcessEnv) => new WebhookConfig(env) },
    WebhookDispatcherService,
  ],
})
export class OrchestratorModule {}
