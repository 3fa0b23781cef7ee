import { chmod, chown, rm } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer, request } from 'node:http';
import type { Socket } from 'node:net';
import { connect } from 'node:net';
import type { EgressRecord } from '@app/contracts';
import type { Destination, DestinationPolicy } from './egress-destination';
import { judgeDestination } from './egress-destination';

/** Connections recorded per command at most; past it they are still bounded, no longer each an event. */
export const MAX_RECORDS_PER_COMMAND = 1_000;
const CONNECT_TIMEOUT_MS = 10_000;

export interface EgressSessionOptions {
  /** Where to listen (a unix socket the sandbox gets bound in), and who may connect to it: the task's uid. */
  readonly socketPath: string;
  readonly owner: { readonly uid: number; readonly gid: number };
  readonly policy: DestinationPolicy;
  readonly maxConnections: number;
  readonly idleTimeoutMs: number;
}

/**
 * The egress proxy for one command of one task: an HTTP proxy (CONNECT tunnels, and plain HTTP
 * requests in absolute form) on a unix socket that only the sandbox can reach. Every connection
 * is judged (judgeDestination), bounded (connections at once, idle time) and recorded: host,
 * port, whether it was let through and why not, bytes each way, duration. Closing the session
 * ends every connection: a task's egress lasts as long as its command.
 */
export class EgressSession {
  private readonly records: EgressRecord[] = [];
  /** Every socket of the session, the sandbox's and the destinations', so closing ends them all. */
  private readonly open = new Set<Socket>();
  /** The sandbox's connections to the proxy: what SANDBOX_EGRESS_MAX_CONNECTIONS bounds. */
  private readonly clients = new Set<Socket>();
  private unrecorded = 0;
  private closed = false;

  private constructor(
    private readonly server: Server,
    private readonly options: EgressSessionOptions,
  ) {}

  /** The socket the command's sandbox gets bound in. */
  get socketPath(): string {
    return this.options.socketPath;
  }

  static async start(options: EgressSessionOptions): Promise<EgressSession> {
    const server = createServer();
    const session = new EgressSession(server, options);
    server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => void session.tunnel(req, client, head));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void session.forward(req, res));
    server.on('connection', (socket: Socket) => {
      session.track(socket);
      session.clients.add(socket);
      socket.once('close', () => session.clients.delete(socket));
    });
    await rm(options.socketPath, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.socketPath, () => resolve());
    });
    await chown(options.socketPath, options.owner.uid, options.owner.gid);
    await chmod(options.socketPath, 0o600);
    return session;
  }

  /** Ends every connection, stops listening, and answers what went through (or was refused). */
  async close(): Promise<{ records: EgressRecord[]; unrecorded: number }> {
    this.closed = true;
    for (const socket of this.open) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.options.socketPath, { force: true });
    // Sockets destroyed just now report their ends on the next turns of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    return { records: [...this.records], unrecorded: this.unrecorded };
  }

  private track(socket: Socket): void {
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
  }

  /** `CONNECT host:port`: judged, then a tunnel to the checked address, counted both ways. */
  private async tunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const startedAt = Date.now();
    const destination = await this.admit(req.url ?? '', startedAt);
    if (!destination) {
      client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    const upstream = this.dial(destination.address, destination.port);
    let established = false;
    upstream.once('connect', () => {
      established = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream).pipe(client);
    });
    this.finishWith(client, upstream, () =>
      established
        ? this.record(destination, startedAt, upstream)
        : this.refused(destination.host, destination.port, 'refused: the destination did not answer', startedAt),
    );
    upstream.once('error', () => {
      if (!established) client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    });
  }

  /** `GET http://host/path` and the like: judged, then sent on over a connection of its own to the checked address. */
  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = Date.now();
    const url = absoluteUrl(req.url);
    const destination = url ? await this.admit(`${url.host.includes(':') ? url.host : `${url.host}:80`}`, startedAt) : undefined;
    if (!url) this.refused(req.url?.slice(0, 255) ?? '', 0, 'refused: only http:// URLs and CONNECT go through this proxy', startedAt);
    if (!url || !destination) {
      res.writeHead(403, { 'content-length': 0, connection: 'close' }).end();
      return;
    }
    const headers = { ...req.headers };
    for (const hop of ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive']) delete headers[hop];
    const upstreamRequest = request({
      host: destination.address,
      port: destination.port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host },
      setHost: false,
      agent: false,
      timeout: this.options.idleTimeoutMs,
    });
    let connected = false;
    let answer: IncomingMessage | undefined;
    upstreamRequest.once('socket', (upstream: Socket) => {
      connected = true;
      this.track(upstream);
      upstream.once('close', () => {
        this.record(destination, startedAt, upstream);
        // Cut short (idle, the session closing, the far end gone before its answer was whole): the
        // client must not wait for the rest. A whole answer is left to the pipe, which still holds
        // its last bytes for a slower client (destroying then lost them).
        if (!answer?.complete) res.destroy();
      });
    });
    upstreamRequest.once('response', (upstreamResponse) => {
      answer = upstreamResponse;
      res.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers);
      upstreamResponse.pipe(res);
    });
    upstreamRequest.once('timeout', () => upstreamRequest.destroy());
    upstreamRequest.once('error', () => {
      if (!connected) this.refused(destination.host, destination.port, 'refused: the destination did not answer', startedAt);
      if (!res.headersSent) res.writeHead(502, { 'content-length': 0, connection: 'close' }).end();
      else res.destroy();
    });
    req.pipe(upstreamRequest);
  }

  /** Judges a target within the session's bounds; a refusal is recorded here. */
  private async admit(target: string, startedAt: number): Promise<(Destination & { allowed: true }) | undefined> {
    if (this.closed) return undefined;
    if (this.clients.size > this.options.maxConnections) {
      const [host, port] = splitTarget(target);
      this.refused(host, port, "refused: the task's connection limit (SANDBOX_EGRESS_MAX_CONNECTIONS) is reached", startedAt);
      return undefined;
    }
    const destination = await judgeDestination(target, this.options.policy);
    if (!destination.allowed) {
      this.refused(destination.host, destination.port, destination.reason, startedAt);
      return undefined;
    }
    return destination;
  }

  private dial(address: string, port: number): Socket {
    const upstream = connect({ host: address, port, timeout: CONNECT_TIMEOUT_MS });
    this.track(upstream);
    upstream.once('connect', () => upstream.setTimeout(this.options.idleTimeoutMs));
    upstream.once('timeout', () => upstream.destroy());
    return upstream;
  }

  /** Ties two sockets' ends together (each ends the other; idle time bounds both) and reports once both are gone. */
  private finishWith(client: Socket, upstream: Socket, done: () => void): void {
    client.setTimeout(this.options.idleTimeoutMs, () => client.destroy());
    let left = 2;
    const closed = () => {
      left -= 1;
      if (left === 0) done();
    };
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ]) {
      a.once('error', () => b.destroy());
      a.once('close', () => {
        b.destroy();
        closed();
      });
    }
  }

  private record(destination: { host: string; port: number }, startedAt: number, upstream: Socket): void {
    this.push({
      host: destination.host,
      port: destination.port,
      allowed: true,
      bytesOut: upstream.bytesWritten,
      bytesIn: upstream.bytesRead,
      durationMs: Date.now() - startedAt,
    });
  }

  private refused(host: string, port: number, reason: string, startedAt: number): void {
    this.push({ host, port, allowed: false, reason, bytesOut: 0, bytesIn: 0, durationMs: Date.now() - startedAt });
  }

  private push(record: EgressRecord): void {
    if (this.records.length < MAX_RECORDS_PER_COMMAND) this.records.push(record);
    else this.unrecorded += 1;
  }
}

function absoluteUrl(raw: string | undefined): URL | undefined {
  if (!raw || !/^http:\/\//i.test(raw)) return undefined;
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

function splitTarget(target: string): [string, number] {
  const at = target.lastIndexOf(':');
  return at < 0 ? [target, 0] : [target.slice(0, at), Number(target.slice(at + 1)) || 0];
}
