import type { ChildProcess } from 'node:child_process';
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { withTimeout } from './timing';

export interface PayloadServer {
  readonly pid: number;
  readonly host: string;
  readonly port: number;
  /** `http://host:port`; `${origin}/bytes/<n>` answers n bytes, any other path 3. */
  readonly origin: string;
  close(): Promise<void>;
}

/** Starts payload-server-child.js listening on `host` (port chosen by the system). */
export async function startPayloadServer(host: string): Promise<PayloadServer> {
  const child: ChildProcess = fork(join(__dirname, 'payload-server-child.js'), [host], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [],
  });
  let port: number;
  try {
    port = await withTimeout(
      'the payload server process: listening',
      new Promise<number>((resolve, reject) => {
        child.once('message', (message: { port: number }) => resolve(message.port));
        child.once('exit', (code) => reject(new Error(`the payload server process exited (${code})`)));
      }),
      10_000,
    );
  } catch (error) {
    // Its IPC channel would keep the bench alive after it gave up.
    child.kill('SIGKILL');
    throw error;
  }
  return {
    pid: child.pid!,
    host,
    port,
    origin: `http://${host}:${port}`,
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await withTimeout('the payload server process to exit', exited, 5_000).catch(() => child.kill('SIGKILL'));
    },
  };
}
