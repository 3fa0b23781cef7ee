import type { WorkflowBundleOption } from '@temporalio/worker';
import { Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { WORKFLOW_TRACING_INTERCEPTORS } from './temporal-tracing';

/** Every workflow our workers run (libs/workflows/src/workflows.ts): one bundle serves every task queue. */
const WORKFLOWS_PATH = require.resolve('../../../workflows/src/workflows');
/** Where scripts/bundle-workflows.js puts the bundle of the compiled workflows (only under dist/). */
const PREBUILT_BUNDLE = join(__dirname, '..', '..', '..', '..', 'workflow-bundle', 'workflows.js');
let sharedBundle: Promise<WorkflowBundleOption> | undefined;

/** The newest modification time of the workflow modules (the bundle holds all of them). */
function newestWorkflowModule(): number {
  const folder = dirname(WORKFLOWS_PATH);
  let newest = 0;
  for (const name of readdirSync(folder)) {
    if (/\.(js|ts)$/.test(name) && !/\.spec\./.test(name)) newest = Math.max(newest, statSync(join(folder, name)).mtimeMs);
  }
  return newest;
}

/**
 * The bundle built with the compiled code when there is one not older than the workflow modules
 * it was made from (a stale one is never run); otherwise bundled here, once per process: webpack
 * in the service costs seconds of CPU and memory it keeps (ts-node, jest, a missing bundle).
 */
export function workflowBundle(): Promise<WorkflowBundleOption> {
  if (existsSync(PREBUILT_BUNDLE) && statSync(PREBUILT_BUNDLE).mtimeMs >= newestWorkflowModule()) {
    return Promise.resolve({ codePath: PREBUILT_BUNDLE });
  }
  // Webpack's report goes to Temporal's logger, at the level the process installed for it.
  sharedBundle ??= bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: [WORKFLOW_TRACING_INTERCEPTORS],
    logger: Runtime.instance().logger,
  }).catch((error) => {
    sharedBundle = undefined;
    throw error;
  });
  return sharedBundle;
}
