import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { MIN_SECRET_LENGTH } from '@app/common';
import type { TaskNetwork } from '@app/task-domain';
import { MAX_WEBHOOK_URL_LENGTH } from '@app/webhooks';
import { IsNotBlank } from '../../validation/is-not-blank';
import { IsStringRecord } from '../../validation/is-string-record';
import { IsCostBudget } from '../../validation/is-cost-budget';
import { IsTokenBudget } from '../../validation/is-token-budget';
import { IsTaskNetwork, MAX_NETWORK_ALLOW_PATTERNS, MAX_NETWORK_PATTERN_LENGTH } from '../../validation/is-task-network';
import { IsWellFormedText } from '../../validation/is-well-formed-text';

export const MAX_MESSAGE_LENGTH = 100_000;

/** The `network` create field as the OpenAPI document shows it (IsTaskNetwork checks it). */
export class TaskNetworkDto {
  @ApiProperty({
    type: [String],
    maxItems: MAX_NETWORK_ALLOW_PATTERNS,
    items: { type: 'string', maxLength: MAX_NETWORK_PATTERN_LENGTH },
    example: ['pypi.org', '*.pythonhosted.org', 'registry.npmjs.org:443'],
    description:
      'Host patterns: `*`, `name`, or `*.name` (its subdomains, not `name`), each with an optional `:port`. `[]` lets nothing out.',
  })
  readonly allow!: string[];
}

export class CreateTaskRequestDto {
  @ApiProperty({ description: 'The instruction for the agent.', example: 'Summarise data.csv into downloads/report.md' })
  @IsString()
  @IsNotBlank()
  @MaxLength(MAX_MESSAGE_LENGTH)
  @IsWellFormedText()
  readonly message: string;

  @ApiPropertyOptional({ default: true, description: 'false: every tool call waits for approval.' })
  @IsOptional()
  @IsBoolean()
  readonly autoExecute?: boolean;

  @ApiPropertyOptional({ default: true, description: 'false: kept out of the task list unless includeHidden=true.' })
  @IsOptional()
  @IsBoolean()
  readonly showInHistory?: boolean;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    example: 200000,
    description:
      'Total tokens (input + output, as `usage.totalTokens` counts them) the task may spend over all its turns. Checked before every model call: ' +
      'once reached, the turn ends `done` with status `failed` and an error saying so, without calling the model (one call may take the total past it). ' +
      'A follow-up may set a new value. At most TASK_MAX_TOKENS_CAP when the service sets one. Default: TASK_MAX_TOKENS, else TASK_MAX_TOKENS_CAP, else unlimited. ' +
      'In multipart: the number as text.',
  })
  @IsTokenBudget()
  readonly maxTokens?: number;

  @ApiPropertyOptional({
    type: 'number',
    minimum: 0,
    maximum: 1e9,
    example: 2.5,
    description:
      "More than 0: USD the task's model calls may cost over all its turns, as `usage.costUsd` counts them (calls of a model without a price count nothing). " +
      'Checked before every model call: once reached, the turn ends `done` with status `failed` and an error naming the cost budget, without calling the model ' +
      '(one call may take the cost past it). A follow-up may set a new value. Default: TASK_MAX_COST_USD, else unlimited. In multipart: the number as text.',
  })
  @IsCostBudget()
  readonly maxCostUsd?: number;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: `Credentials for this task only, as environment variables; never logged or returned, stored only encrypted (SECRETS_KEY). Values of at least ${MIN_SECRET_LENGTH} characters. In multipart: a JSON-encoded text field.`,
  })
  @IsOptional()
  @IsStringRecord({ maxEntries: 50, maxValueLength: 16_384, minValueLength: MIN_SECRET_LENGTH })
  readonly secrets?: Record<string, string>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Environment values for the task. GET shows only their keys. In multipart: a JSON-encoded text field.',
  })
  @IsOptional()
  @IsStringRecord({ maxEntries: 100, maxValueLength: 32_768 })
  readonly env?: Record<string, string>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: {
      type: 'object',
      properties: { url: { type: 'string' }, headers: { type: 'object', additionalProperties: { type: 'string' } } },
      required: ['url'],
    },
    description:
      'This task\'s own MCP servers, Streamable HTTP only: `{"<name>": {"url", "headers"}}` (at most 10; names of letters, digits, - and single _). ' +
      "A header value may be `{{secrets.NAME}}`, filled in from this task's secrets when connecting (only the reference is stored). " +
      'Their tools appear as `mcp__<name>__<tool>`. Private addresses are refused unless in MCP_ALLOW_HOSTS. In multipart: a JSON-encoded text field.',
  })
  @IsOptional()
  @IsObject()
  @IsWellFormedText()
  readonly mcpServers?: Record<string, unknown>;

  @ApiPropertyOptional({
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    example: 'https://hooks.example.com/agent-tasks',
    description:
      "Where this task's webhooks go (`task.awaiting_approval`, `task.completed`, `task.failed`, `task.cancelled`), signed with WEBHOOK_SECRET " +
      'by the Standard Webhooks scheme; their delivery is shown by GET /api/v1/tasks/{id}/webhook-deliveries. An http(s) URL without credentials; ' +
      'private and loopback addresses are refused unless in WEBHOOK_ALLOW_HOSTS. Needs WEBHOOK_SECRET. Default: WEBHOOK_URL, else none. In multipart: a text field.',
  })
  @IsOptional()
  @IsString()
  @IsWellFormedText()
  readonly webhookUrl?: string;

  @ApiPropertyOptional({
    type: () => TaskNetworkDto,
    example: { allow: ['pypi.org', '*.pythonhosted.org'] },
    description:
      "Where this task's commands may connect through the sandbox's egress proxy (SANDBOX_NETWORK=egress): host patterns `*`, `name` or " +
      '`*.name` (its subdomains), each with an optional `:port`; `[]` lets nothing out. Private and loopback addresses stay refused unless in ' +
      'SANDBOX_EGRESS_ALLOW_HOSTS. Default: SANDBOX_EGRESS_ALLOW. In multipart: a JSON-encoded text field.',
  })
  @IsOptional()
  @IsTaskNetwork()
  readonly network?: TaskNetwork;
}
