import type { Attributes, Span } from '@opentelemetry/api';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';

/** The tracer of this service's own spans (Temporal's interceptors name theirs). */
export const tracer = () => trace.getTracer('agentic-task-service');

/**
 * Span attribute names of our own spans (the GenAI spans' are in gen-ai.ts). Values are ids, names,
 * counts and outcomes only: never message text, tool arguments or output, nor a secret
 * (docs/operations/observability.md, "Tracing").
 */
export const ATTR = {
  taskId: 'task.id',
  turn: 'task.turn',
  stepOutcome: 'agent.step.outcome',
  toolName: 'tool.name',
  toolCallId: 'tool.call.id',
  toolStatus: 'tool.status',
  messagingSystem: 'messaging.system',
  subject: 'messaging.destination.name',
} as const;

export interface SpanOptions {
  readonly kind?: SpanKind;
  readonly attributes?: Attributes;
}

/**
 * Runs `fn` inside a new span, the active one for everything it awaits, and ends the span with
 * its outcome. A failure's status names the error's class only: its message can quote a secret.
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : typeof error });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** inSpan for synchronous work (publishing, handing a fact to a subscriber). */
export function inSpanSync<T>(name: string, options: SpanOptions, fn: (span: Span) => T): T {
  return tracer().startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, (span) => {
    try {
      return fn(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : typeof error });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Whether a trace is under way here (a span of this process, or a caller's carried in): background work stays untraced. */
export function inTrace(): boolean {
  return trace.getSpan(context.active()) !== undefined;
}
