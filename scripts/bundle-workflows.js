// Bundles the Temporal workflow code (libs/workflows, compiled under dist/) once, at build time,
// into dist/workflow-bundle/workflows.js, which the Temporal workers (the orchestrator's agent
// turns, the API's schedules) load as it is (libs/runner/src/temporal/workflow-bundle.ts).
// Bundling at every worker start instead runs webpack in the service process: ~5 s of CPU and
// ~150 MiB of RSS it never gives back (BENCHMARKS.md, "Footprint"). Temporal recommends pre-bundling for production for the same reason.
//
// Run as a script it bundles only when stale (no bundle, or a compiled workflow module is newer
// than it, as after any rebuild of dist/ by build-services.js, which it runs first); `--force`
// bundles anyway. The runner makes the same check and bundles in process when the file is missing
// or stale, so a stale bundle is never run, only slower to start.
const { existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { buildIfStale, OUT_DIR } = require('./build-services');

const WORKFLOWS_FOLDER = join(OUT_DIR, 'libs', 'workflows', 'src');
const WORKFLOWS_MODULE = join(WORKFLOWS_FOLDER, 'workflows.js');
const BUNDLE = join(OUT_DIR, 'workflow-bundle', 'workflows.js');

/** The newest compiled workflow module: the bundle holds every one of them. */
const newestModule = () =>
  Math.max(
    ...readdirSync(WORKFLOWS_FOLDER)
      .filter((name) => name.endsWith('.js'))
      .map((name) => statSync(join(WORKFLOWS_FOLDER, name)).mtimeMs),
  );

/** No bundle, or one older than the compiled workflows or than this script (what it puts in the bundle). */
const isStale = () => !existsSync(BUNDLE) || Math.max(newestModule(), statSync(__filename).mtimeMs) > statSync(BUNDLE).mtimeMs;

async function bundleIfStale({ force = false, quiet = false } = {}) {
  await buildIfStale({ quiet: true });
  if (!force && !isStale()) return false;
  const started = Date.now();
  const { bundleWorkflowCode, DefaultLogger } = require('@temporalio/worker');
  // Webpack's report is noise here; its errors still reject bundleWorkflowCode.
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_MODULE,
    // Temporal's OpenTelemetry workflow interceptors (libs/runner/src/temporal/temporal-tracing.ts): a
    // pre-built bundle must hold them, the worker's interceptor options cannot add them to it.
    workflowInterceptorModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')],
    logger: new DefaultLogger('WARN'),
  });
  mkdirSync(dirname(BUNDLE), { recursive: true });
  const temporary = `${BUNDLE}.${process.pid}.tmp`;
  writeFileSync(temporary, code);
  renameSync(temporary, BUNDLE);
  if (!quiet) console.error(`bundled the Temporal workflows into ${BUNDLE} in ${Date.now() - started} ms`);
  return true;
}

module.exports = { bundleIfStale, BUNDLE };

if (require.main === module) {
  bundleIfStale({ force: process.argv.includes('--force') }).catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
