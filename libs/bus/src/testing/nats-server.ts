import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The shared NATS of integration tests: `NATS_URL`, default the local server. */
export function natsUrlForTests(): string {
  return process.env.NATS_URL?.trim() || 'nats://127.0.0.1:4222';
}

/** Fails with a message that says what to do, instead of letting each test time out or skip. */
export async function assertNatsAnswers(url: string, timeoutMs = 3_000): Promise<void> {
  const { hostname, port } = new URL(url.includes('://') ? url : `nats://${url}`);
  // Errors from node:net come from outside jest's realm, so no `instanceof Error` here.
  const info = await readGreeting(hostname, Number(port || 4222), timeoutMs).catch((error: { message: string }) => ({ error }));
  if (typeof info !== 'string' || !info.startsWith('INFO ')) {
    const why = typeof info === 'string' ? `it answered "${info.slice(0, 40)}"` : info.error.message;
    throw new Error(`no NATS server at ${url} (${why}). Start one (nats-server -js) or point NATS_URL at one.`);
  }
}

export interface PrivateNatsServer {
  readonly url: string;
  /** Kills the server as a crash would (SIGKILL). */
  kill(): Promise<void>;
  /** Kills it and removes its JetStream store. */
  dispose(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
}

/**
 * A `nats-server` of the test's own on a free loopback port, so a test can kill and restart it
 * without touching the shared server. `NATS_SERVER_BIN` names the binary (default: on PATH).
 */
export async function startPrivateNatsServer(): Promise<PrivateNatsServer> {
  const port = await freePort();
  const storeDir = await mkdtemp(join(tmpdir(), 'ats-nats-js-'));
  const bin = process.env.NATS_SERVER_BIN || 'nats-server';
  let child: ChildProcess | undefined;
  const server: PrivateNatsServer = {
    url: `nats://127.0.0.1:${port}`,
    async kill() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
    async dispose() {
      await server.kill();
      await rm(storeDir, { recursive: true, force: true });
    },
    async start() {
      // JetStream on, as the shared server has it (coordination buckets live there); its store
      // survives a kill and a start, like a real server's disk.
      const proc = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: ['ignore', 'ignore', 'pipe'] });
      child = proc;
      // Never outlive the test process, whatever happens to its afterAll.
      const reap = () => proc.kill('SIGKILL');
      process.once('exit', reap);
      proc.once('exit', () => process.off('exit', reap));
      let stderr = '';
      proc.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2_000)));
      const failed = new Promise<never>((_, reject) => {
        proc.once('error', (error) => reject(new Error(`cannot run ${bin}: ${error.message} (set NATS_SERVER_BIN)`)));
        proc.once('exit', (code) => reject(new Error(`${bin} exited with ${code}: ${stderr.trim()}`)));
      });
      failed.catch(() => undefined);
      const until = Date.now() + 10_000;
      for (;;) {
        const ready = await Promise.race([
          readGreeting('127.0.0.1', port, 500).then(
            () => true,
            () => false,
          ),
          failed,
        ]);
        if (ready) return;
        if (Date.now() > until) {
          proc.kill('SIGKILL');
          throw new Error(`${bin} did not listen on ${port} within 10 s: ${stderr.trim()}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
  await server.start();
  return server;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

/** The first line a NATS server sends on connect (`INFO {...}`). */
function readGreeting(host: string, port: number, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let received = '';
    const done = (error?: Error) => {
      socket.destroy();
      if (error) reject(error);
      else resolve(received);
    };
    socket.setTimeout(timeoutMs, () => done(new Error(`no answer within ${timeoutMs} ms`)));
    socket.once('error', done);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
      if (received.includes('\r\n')) done();
    });
    socket.once('end', () => done(new Error('closed without a greeting')));
    socket.connect(port, host);
  });
}
