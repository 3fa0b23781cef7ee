import { Module } from '@nestjs/common';
import { AgentRunnerService } from './agent-loop/agent-runner.service';

/** The agent loop: turns task events into model calls and tool runs. */
@Module({ providers: [AgentRunnerService] })
export class OrchestratorModule {}
