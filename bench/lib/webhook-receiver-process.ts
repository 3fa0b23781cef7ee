import type { ChildProcess } from 'node:child_process';
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { withTimeout } from './timing';

/** One POST the receiver process had in full. */
export interface WebhookArrival {
  readonly webhookId: string;
  readonly taskId: string;
  readonly type: string;
  /** The message's `timestamp`: the recorded time of the event that made it due (ms precision). */
  readonly recordedAtMs: number;
  /** Epoch ms with sub-ms precision, when the body had arrived. */
  readonly receivedAtMs: number;
}

export interface ReceiverProcess {
  readonly pid: number;
  readonly port: number;
  readonly origin: string;
  /** Resolves once a message of `type` has arrived for every one of `taskIds` (within `timeoutMs`). */
  whenReceived(type: string, taskIds: readonly string[], timeoutMs: number): Promise<void>;
  /** Every message received so far, repeats included, in order of arrival. */
  arrivals(): Promise<WebhookArrival[]>;
  close(): Promise<void>;
}

type FromReceiver = { port: number } | { warm: true } | { complete: true } | { arrivals: WebhookArrival[] };

/** POSTs the receiver makes to itself before it is used: a receiver that has been serving runs optimized code. */
const WARM_UP_REQUESTS = 2_000;

/** Starts webhook-receiver-child.js (a real HTTP receiver answering 200) as a child process. */
export async function startReceiverProcess(): Promise<ReceiverProcess> {
  const child: ChildProcess = fork(join(__dirname, 'webhook-receiver-child.js'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [],
  });
  const next = <T extends FromReceiver>(has: (m: FromReceiver) => m is T, what: string, timeoutMs: number): Promise<T> =>
    withTimeout(
      `the webhook receiver process: ${what}`,
      new Promise<T>((resolve) => {
        const listener = (message: FromReceiver) => {
          if (!has(message)) return;
          child.off('message', listener);
          resolve(message);
        };
        child.on('message', listener);
      }),
      timeoutMs,
    );
  let port: number;
  try {
    ({ port } = await next((m): m is { port: number } => 'port' in m, 'listening', 10_000));
    const warm = next((m): m is { warm: true } => 'warm' in m, 'its warm-up', 60_000);
    child.send({ warmUp: WARM_UP_REQUESTS });
    await warm;
  } catch (error) {
    // Its IPC channel would keep the bench alive after it gave up.
    child.kill('SIGKILL');
    throw error;
  }
  return {
    pid: child.pid!,
    port,
    origin: `http://127.0.0.1:${port}`,
    async whenReceived(type, taskIds, timeoutMs) {
      const complete = next((m): m is { complete: true } => 'complete' in m, `${taskIds.length} ${type} messages`, timeoutMs);
      child.send({ expect: { type, taskIds } });
      await complete;
    },
    async arrivals() {
      const report = next((m): m is { arrivals: WebhookArrival[] } => 'arrivals' in m, 'its report', 10_000);
      child.send({ report: true });
      return (await report).arrivals;
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await withTimeout('the webhook receiver process to exit', exited, 5_000).catch(() => child.kill('SIGKILL'));
    },
  };
}
