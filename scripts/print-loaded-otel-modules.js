// Preloaded into a service process by test/tracing/all-in-one-traces.e2e-spec.ts (NODE_OPTIONS=
// --require ...): on SIGWINCH it prints, as one JSON line on stderr, the OpenTelemetry packages
// the process has loaded, so the test can tell what tracing costs when off. SIGWINCH because
// Nest's shutdown hooks leave it alone (see print-memory-on-signal.js).
process.on('SIGWINCH', () => {
  const loaded = Object.keys(require.cache)
    .map((path) => /node_modules\/(@opentelemetry\/[^/]+|@temporalio\/interceptors-opentelemetry)\//.exec(path)?.[1])
    .filter(Boolean);
  process.stderr.write(`loaded-otel-modules ${JSON.stringify([...new Set(loaded)].sort())}\n`);
});
