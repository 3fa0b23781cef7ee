import { boolFromEnv } from '@app/common';

/**
 * Tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT is set (the OTLP/HTTP base URL of a collector,
 * e.g. http://127.0.0.1:4318); spans go to `<endpoint>/v1/traces` as protobuf. Unset: off, and no
 * SDK module is loaded. OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, when set, is the full URL instead.
 */
export function otlpTracesUrlFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return undefined;
  const full = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const [name, value] = full ? ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', full] : ['OTEL_EXPORTER_OTLP_ENDPOINT', base];
  const url = full || `${base.replace(/\/+$/, '')}/v1/traces`;
  if (!isHttpUrl(url)) throw new Error(`${name} must be an http(s) URL, got "${value}"`);
  return url;
}

function isHttpUrl(url: string): boolean {
  try {
    const { protocol, hostname } = new URL(url);
    return (protocol === 'http:' || protocol === 'https:') && hostname !== '';
  } catch {
    return false;
  }
}

/**
 * OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true puts the conversation, the model's answer
 * and tool arguments and results on the GenAI spans, each task's secrets masked. Off by default:
 * nothing a task says leaves the process in a span.
 */
export function captureGenAiContentFromEnv(env: NodeJS.ProcessEnv): boolean {
  return boolFromEnv(env, 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', false);
}
