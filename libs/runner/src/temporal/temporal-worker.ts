import { Client, Connection } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { NativeConnection, Worker } from '@temporalio/worker';
import { TemporalUnreachableError } from '../runner.errors';
import { temporalTracing } from './temporal-tracing';
import { workflowBundle } from './workflow-bundle';

export interface TemporalWorkerOptions {
  /** host:port of the Temporal frontend. */
  readonly address: string;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly activities: object;
  /** The longest the worker holds a heartbeat back. */
  readonly heartbeatIntervalMs: number;
  /** How long a workflow task waits for the worker that ran its workflow last (SDK default when absent). */
  readonly stickyTimeoutMs?: number;
  /** How long activities running here may go on after shutdown() before they are cancelled. */
  readonly shutdownGraceMs: number;
  /** Defaults to the shared bundle of every workflow (workflow-bundle.ts). */
  readonly workflowBundle?: WorkflowBundleWithSourceMap;
  /** The worker stopped with an error (it no longer polls). */
  readonly onWorkerError: (error: unknown) => void;
}

/** A worker polling its task queue, with a client of the same namespace. */
export interface RunningWorker {
  readonly worker: Worker;
  /** Settles when the worker has stopped (an error goes to onWorkerError). */
  readonly running: Promise<void>;
  readonly client: Client;
  readonly connection: Connection;
  readonly nativeConnection: NativeConnection;
}

/**
 * Connects to Temporal and runs a worker of one task queue, traced like every Temporal call of
 * ours: what the agent turns' runner and the schedules' clock both start. An unreachable server
 * fails with TemporalUnreachableError, and nothing is left open.
 */
export async function startTemporalWorker(options: TemporalWorkerOptions): Promise<RunningWorker> {
  const { address, namespace } = options;
  const bundle = await (options.workflowBundle ?? workflowBundle());
  const tracing = await temporalTracing();
  const unreachable = (error: unknown) => {
    throw new TemporalUnreachableError(address, error);
  };
  const connection = await Connection.connect({ address }).catch(unreachable);
  let nativeConnection: NativeConnection | undefined;
  try {
    nativeConnection = await NativeConnection.connect({ address }).catch(unreachable);
    const worker = await Worker.create({
      connection: nativeConnection,
      namespace,
      taskQueue: options.taskQueue,
      workflowBundle: bundle,
      activities: options.activities,
      maxHeartbeatThrottleInterval: options.heartbeatIntervalMs,
      ...(options.stickyTimeoutMs === undefined ? {} : { stickyQueueScheduleToStartTimeout: options.stickyTimeoutMs }),
      interceptors: { activity: tracing.activityInterceptors },
      sinks: tracing.sinks,
      shutdownGraceTime: options.shutdownGraceMs,
    });
    const running = worker.run().catch(options.onWorkerError);
    return {
      worker,
      running,
      client: new Client({ connection, namespace, interceptors: { workflow: tracing.clientInterceptors } }),
      connection,
      nativeConnection,
    };
  } catch (error) {
    await nativeConnection?.close().catch(() => undefined);
    await connection.close().catch(() => undefined);
    throw error;
  }
}

/** Stops polling, waits for the activities running here (for their grace time), and closes the connections. */
export async function stopTemporalWorker(started: RunningWorker): Promise<void> {
  if (started.worker.getState() === 'RUNNING') started.worker.shutdown();
  await started.running;
  await started.connection.close();
  await started.nativeConnection.close();
}
