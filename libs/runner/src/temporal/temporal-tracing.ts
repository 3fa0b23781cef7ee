import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import { runningOtelSdk } from '@app/tracing';

/**
 * Temporal's OpenTelemetry workflow interceptors: they continue the trace a workflow was started
 * or signalled in, and pass it on to its activities through their headers. Always bundled with
 * the workflows (the pre-built bundle serves tracing on and off); off, their spans go nowhere.
 */
export const WORKFLOW_TRACING_INTERCEPTORS = require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/** What the worker and client take to carry a turn's trace through Temporal. */
export interface TemporalTracing {
  readonly clientInterceptors: WorkflowClientInterceptor[];
  readonly activityInterceptors: ActivityInterceptorsFactory[];
  /** The sink the workflow interceptors hand their spans to (a no-op one while tracing is off). */
  readonly sinks: InjectedSinks<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- Temporal's own type for it
}

const OFF: TemporalTracing = {
  clientInterceptors: [],
  activityInterceptors: [],
  sinks: { exporter: { export: { fn: () => undefined } } },
};

/**
 * Temporal's interceptors on the running SDK; loaded only when tracing is on. The workflow spans'
 * sink is given the workflow's id, run and type only: Temporal's copies all of its info (memo,
 * search attributes, last result) into every span's attributes.
 */
export async function temporalTracing(): Promise<TemporalTracing> {
  const sdk = runningOtelSdk();
  if (!sdk) return OFF;
  const otel = await import('@temporalio/interceptors-opentelemetry');
  const exporter = otel.makeWorkflowExporter(sdk.spanProcessor, sdk.resource);
  return {
    clientInterceptors: [new otel.OpenTelemetryWorkflowClientInterceptor()],
    activityInterceptors: [
      (ctx) => ({
        inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx),
        outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
      }),
    ],
    sinks: {
      exporter: {
        export: {
          ...exporter.export,
          fn: (info: WorkflowInfo, spans: Parameters<typeof exporter.export.fn>[1]) =>
            exporter.export.fn({ workflowId: info.workflowId, runId: info.runId, workflowType: info.workflowType } as WorkflowInfo, spans),
        },
      },
    },
  };
}
