// Preloaded by scripts/measure-start-rss.sh (node -r): on SIGWINCH the process prints one line of
// process.memoryUsage() in MiB to stderr, so the footprint can be broken down (V8 heap, external
// memory such as WASM and Buffers) without code in the service itself. Not SIGUSR2: NestJS's
// enableShutdownHooks() closes the app on it (the HTTP server stops listening), SIGWINCH it leaves alone.
process.on('SIGWINCH', () => {
  const mib = (bytes) => Math.round(bytes / 1048576);
  const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
  const fields = { rss, heapTotal, heapUsed, external, arrayBuffers };
  process.stderr.write(
    `memoryUsage MiB ${Object.entries(fields)
      .map(([key, value]) => `${key}=${mib(value)}`)
      .join(' ')}\n`,
  );
});
