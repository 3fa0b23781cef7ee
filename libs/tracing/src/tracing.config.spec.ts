import { runningOtelSdk, startTracing } from './start-tracing';
import { captureGenAiContentFromEnv, otlpTracesUrlFromEnv } from './tracing.config';

describe('otlpTracesUrlFromEnv', () => {
  it('is off without OTEL_EXPORTER_OTLP_ENDPOINT (unset or blank)', () => {
    expect(otlpTracesUrlFromEnv({})).toBeUndefined();
    expect(otlpTracesUrlFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBeUndefined();
  });

  it('sends to <endpoint>/v1/traces, or to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given', () => {
    expect(otlpTracesUrlFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toBe('http://collector:4318/v1/traces');
    expect(
      otlpTracesUrlFromEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other/traces',
      }),
    ).toBe('http://other/traces');
  });

  it('refuses an endpoint that is not an http(s) URL', () => {
    expect(() => otlpTracesUrlFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' })).toThrow(/http\(s\) URL/);
    expect(() => otlpTracesUrlFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://[bad' })).toThrow(/http\(s\) URL/);
    expect(() =>
      otlpTracesUrlFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://' }),
    ).toThrow(/^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http\(s\) URL, got "http:\/\/"/);
  });
});

const sdkModulesLoaded = () =>
  Object.keys(require.cache).filter((path) => /@opentelemetry\/(sdk-trace-base|exporter-trace-otlp-proto)\//.test(path));

describe('startTracing', () => {
  // In this order: the second case loads the SDK into the module registry for good.
  it('is off and loads no SDK module when the endpoint is unset', async () => {
    const tracing = await startTracing('test', {});
    expect(tracing.enabled).toBe(false);
    expect(runningOtelSdk()).toBeUndefined();
    expect(sdkModulesLoaded()).toEqual([]);
    await tracing.stop();
  });

  it('loads and runs the SDK when it is set, shared by a second start, shut down by the last stop', async () => {
    const first = await startTracing('test', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    const second = await startTracing('test', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(first.enabled && second.enabled).toBe(true);
    expect(sdkModulesLoaded().length).toBeGreaterThan(0);
    const sdk = runningOtelSdk();
    await first.stop();
    expect(runningOtelSdk()).toBe(sdk);
    await second.stop();
    expect(runningOtelSdk()).toBeUndefined();
  });
});

describe('captureGenAiContentFromEnv', () => {
  it('is off unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is true, and refuses what is no boolean', () => {
    expect(captureGenAiContentFromEnv({})).toBe(false);
    expect(captureGenAiContentFromEnv({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'false' })).toBe(false);
    expect(captureGenAiContentFromEnv({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' })).toBe(true);
    expect(() => captureGenAiContentFromEnv({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'all' })).toThrow(/true or false/);
  });
});
