import { SpanKind } from '@opentelemetry/api';
import type { ModelProvider, ModelRequest, ModelResponse } from '@app/model-provider';
import type { GenAiTarget } from './gen-ai';
import { GEN_AI, chatRequestAttributes, chatResponseAttributes, chatSpanName, errorType, inputMessages, outputMessages } from './gen-ai';
import { inSpan } from './spans';

/**
 * Masks the secrets of the task whose work is under way in every string of a value; undefined
 * when no task's is (then no content is recorded: whose secrets to mask is unknown).
 */
export type ContentRedactor = <T>(value: T) => T | undefined;

export interface TraceModelProviderOptions {
  readonly target: GenAiTarget;
  /** Set: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is on, and content goes on the span through it. */
  readonly captureContent?: ContentRedactor;
}

/**
 * The model provider with a `chat <model>` span per completion, named and attributed as the
 * OpenTelemetry GenAI conventions say: provider, requested and answering model, finish reason and
 * tokens; the conversation and the answer only when content capture is on, redacted.
 */
export function traceModelProvider(provider: ModelProvider, { target, captureContent }: TraceModelProviderOptions): ModelProvider {
  return {
    name: provider.name,
    complete: (request: ModelRequest): Promise<ModelResponse> =>
      inSpan(chatSpanName(target), { kind: SpanKind.CLIENT, attributes: chatRequestAttributes(target) }, async (span) => {
        const input = captureContent?.(inputMessages(request.messages));
        if (input) span.setAttribute(GEN_AI.inputMessages, JSON.stringify(input));
        let response: ModelResponse;
        try {
          response = await provider.complete(request);
        } catch (error) {
          span.setAttribute(GEN_AI.errorType, errorType(error));
          throw error;
        }
        span.setAttributes(chatResponseAttributes(response));
        const output = captureContent?.(outputMessages(response));
        if (output) span.setAttribute(GEN_AI.outputMessages, JSON.stringify(output));
        return response;
      }),
  };
}
