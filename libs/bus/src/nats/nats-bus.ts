// Over 300 lines on purpose: one class owns one NATS connection, and its four operations share
// that connection's state (command and fact subscriptions, requests awaiting replies), the drain on
// close and the reconnect watcher; split apart, each piece would need the others' internals.
import type { LoggerService } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { NatsContext } from '@nestjs/microservices';
import type { NatsConnection, Subscription } from 'nats';
import { DebugEvents, Events, connect } from 'nats';
import type { Observable } from 'rxjs';
import { catchError, defer, throwError, timeout } from 'rxjs';
import type { MessageBus, Unsubscribe } from '../bus.port';
import { BusTimeoutError, BusUnavailableError, DEFAULT_REQUEST_TIMEOUT_MS, NoHandlerError } from '../bus.port';
import { BusNatsClient } from './bus-nats.client';
import { BusNatsServer } from './bus-nats.server';
import type { ReconnectBackoffOptions } from './reconnect-backoff';
import { ReconnectBackoff } from './reconnect-backoff';
import { inTraceOf, withTraceHeaders } from './trace-headers';
import { fromWireError, toWireError } from './wire-error';

/**
 * The queue group of every `handle()` subscription. Instances in one group share the requests of
 * a subject (one answers); a responder in another group would answer the same request too, so
 * every service, and any Nest `@MessagePattern` that shares our subjects, must use this one.
 */
export const DEFAULT_NATS_QUEUE = 'agentic-task-service';

export interface NatsBusOptions {
  /** `nats://host:4222`, or several URLs of one cluster. */
  readonly servers: string | readonly string[];
  readonly queue?: string;
  /** The connection's name in the server's monitoring. */
  readonly name?: string;
  readonly reconnect?: ReconnectBackoffOptions;
  /** How long `close()` waits for handlers still running and requests still awaiting a reply. */
  readonly drainTimeoutMs?: number;
  /** How long the first connection may take. */
  readonly connectTimeoutMs?: number;
  readonly logger?: LoggerService;
}

type Handler = (payload: unknown) => Promise<unknown>;
type CommandEntry = { readonly sub: Subscription; readonly handlers: Handler[]; next: number };
type FactEntry = { readonly sub: Subscription; readonly subscribers: Set<(payload: unknown) => void> };
type PendingRequest = { readonly subject: string; abort(error: Error): void };

/**
 * Connects (failing at once, with the URL in the message, when no server answers), then
 * reconnects forever with backoff: a NATS restart costs the requests in flight, never the service.
 */
export async function createNatsBus(options: NatsBusOptions): Promise<NatsBus> {
  const servers = typeof options.servers === 'string' ? [options.servers] : [...options.servers];
  const backoff = new ReconnectBackoff(options.reconnect);
  let connection: NatsConnection;
  try {
    connection = await connect({
      servers,
      name: options.name,
      timeout: options.connectTimeoutMs ?? 10_000,
      maxReconnectAttempts: -1,
      reconnectDelayHandler: () => backoff.delayMs(),
    });
  } catch (error) {
    throw new Error(`NATS at ${servers.join(', ')} did not answer: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  const bus = new NatsBus(connection, backoff, options);
  try {
    await bus.start();
  } catch (error) {
    await connection.close();
    throw error;
  }
  return bus;
}

/**
 * The distributed mode's bus. Messages use the packets of Nest's NATS transport, so a Nest
 * `@MessagePattern` / `@EventPattern` controller or a `ClientNats` can take part in either role.
 * Commands (`handle`) go through one queue subscription per subject and instance, facts
 * (`subscribe`) through a plain one, so every instance hears them; local handlers of one subject
 * take turns. Payloads are JSON.
 */
export class NatsBus implements MessageBus {
  private readonly logger: LoggerService;
  private readonly queue: string;
  private readonly drainTimeoutMs: number;
  private readonly server: BusNatsServer;
  private readonly client: BusNatsClient;
  private readonly commands = new Map<string, CommandEntry>();
  private readonly facts = new Map<string, FactEntry>();
  private readonly running = new Set<Promise<unknown>>();
  private readonly pending = new Set<PendingRequest>();
  private connected = true;
  private disconnectedAt = 0;
  private closing?: Promise<void>;

  constructor(
    private readonly connection: NatsConnection,
    private readonly backoff: ReconnectBackoff,
    options: Omit<NatsBusOptions, 'servers'>,
  ) {
    this.logger = options.logger ?? new Logger('NatsBus');
    this.queue = options.queue ?? DEFAULT_NATS_QUEUE;
    this.drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
    this.server = new BusNatsServer(connection, this.logger);
    this.client = new BusNatsClient(connection);
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      // Nest's listen() reports every failure through its callback; its own promise never rejects.
      void this.server.listen((error) => (error ? reject(error) : resolve()));
    });
    await this.client.connect();
    this.watch().catch((error: unknown) => this.logger.error(`stopped watching the NATS connection: ${String(error)}`));
    void this.connection.closed().then((error) => {
      if (!this.closing)
        this.logger.error(`the NATS connection closed for good${error ? `: ${error.message}` : ''}; the bus carries nothing any more`);
    });
    this.logger.log(`connected to NATS at ${this.connection.getServer()}`);
  }

  async ping(): Promise<void> {
    if (this.connection.isClosed()) throw new Error('the NATS connection is closed');
    if (!this.connected) throw new Error('the NATS connection is down (reconnecting)');
    await this.connection.rtt();
  }

  request<Req, Res>(subject: string, payload: Req, options?: { timeoutMs?: number }): Promise<Res> {
    if (this.connection.isClosed()) return Promise.reject(new BusUnavailableError(subject, 'the bus is closed'));
    if (!this.connected) return Promise.reject(new BusUnavailableError(subject, 'the NATS connection is down (reconnecting)'));
    const timeoutMs = options?.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const reply$ = this.client
      .send<Res>(subject, withTraceHeaders(payload))
      .pipe(timeout({ first: timeoutMs, with: () => throwError(() => new BusTimeoutError(subject, timeoutMs)) }));
    return new Promise<Res>((resolve, reject) => {
      let reply: Res | undefined;
      const request: PendingRequest = {
        subject,
        abort: (error) => {
          subscription.unsubscribe();
          this.pending.delete(request);
          reject(error);
        },
      };
      this.pending.add(request);
      const subscription = reply$.subscribe({
        next: (value) => (reply = value),
        error: (error: unknown) => {
          this.pending.delete(request);
          reject(fromWireError(subject, error));
        },
        complete: () => {
          this.pending.delete(request);
          resolve(reply as Res);
        },
      });
    });
  }

  handle<Req, Res>(subject: string, handler: (payload: Req) => Promise<Res>): Unsubscribe {
    this.assertOpen(subject, this.facts, 'facts');
    let entry = this.commands.get(subject);
    if (!entry) {
      this.server.addHandler(subject, async (data: unknown, ctx?: NatsContext) => this.dispatch(subject, data, ctx), false);
      const sub = this.connection.subscribe(subject, { queue: this.queue, callback: this.server.subscriptionCallback(subject) });
      entry = { sub, handlers: [], next: 0 };
      this.commands.set(subject, entry);
    }
    const own = entry;
    own.handlers.push(handler as Handler);
    return once(() => {
      const index = own.handlers.indexOf(handler as Handler);
      if (index >= 0) own.handlers.splice(index, 1);
      if (own.handlers.length > 0 || this.commands.get(subject) !== own) return;
      this.commands.delete(subject);
      this.server.removeHandler(subject);
      void drainQuietly(own.sub);
    });
  }

  publish<T>(subject: string, payload: T): void {
    if (this.connection.isClosed()) return;
    if (!this.connected) {
      this.logger.warn(`fact on ${subject} dropped: the NATS connection is down (reconnecting)`);
      return;
    }
    this.client.emit(subject, withTraceHeaders(payload)).subscribe({
      error: (error: unknown) =>
        this.logger.error(`fact on ${subject} not published: ${error instanceof Error ? error.message : String(error)}`),
    });
  }

  subscribe<T>(subject: string, handler: (payload: T) => void): Unsubscribe {
    this.assertOpen(subject, this.commands, 'commands');
    let entry = this.facts.get(subject);
    if (!entry) {
      this.server.addHandler(subject, async (data: unknown, ctx?: NatsContext) => this.fanOut(subject, data, ctx), true);
      const sub = this.connection.subscribe(subject, { callback: this.server.subscriptionCallback(subject) });
      entry = { sub, subscribers: new Set() };
      this.facts.set(subject, entry);
    }
    const own = entry;
    const subscriber = (payload: unknown) => handler(payload as T);
    own.subscribers.add(subscriber);
    return once(() => {
      own.subscribers.delete(subscriber);
      if (own.subscribers.size > 0 || this.facts.get(subject) !== own) return;
      this.facts.delete(subject);
      this.server.removeHandler(subject);
      // A fact is for whoever listens now; drained, it could reach a new subscription twice.
      own.sub.unsubscribe();
    });
  }

  /**
   * Resolves once the server has processed everything this instance sent so far, its
   * subscriptions included: after it, requests from other instances find this one's handlers.
   */
  flush(): Promise<void> {
    return this.connection.flush();
  }

  /**
   * Drains: stops taking commands and facts, lets running handlers answer and sent requests get
   * their replies (both at most `drainTimeoutMs`), then flushes and closes the connection.
   */
  close(): Promise<void> {
    this.closing ??= this.drain();
    return this.closing;
  }

  private async drain(): Promise<void> {
    for (const [subject, { sub }] of this.facts) {
      sub.unsubscribe();
      this.server.removeHandler(subject);
    }
    const subs = [...this.commands].map(([subject, { sub }]) => {
      this.server.removeHandler(subject);
      return drainQuietly(sub);
    });
    this.commands.clear();
    this.facts.clear();
    await withDeadline(Promise.all(subs), this.drainTimeoutMs);
    if (!(await waitUntil(() => this.running.size === 0 && this.pending.size === 0, this.drainTimeoutMs))) {
      this.logger.warn(`closing with ${this.running.size} handler(s) still running and ${this.pending.size} request(s) unanswered`);
    }
    for (const p of [...this.pending]) p.abort(new BusUnavailableError(p.subject, 'the bus closed before the reply arrived'));
    // Nest writes a reply on the tick after its handler settles.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.connection.isClosed()) return;
    const drained = this.connection.drain().catch(() => undefined);
    if ((await withDeadline(drained, this.drainTimeoutMs)) === 'timeout') await this.connection.close();
  }

  private dispatch(subject: string, data: unknown, ctx?: NatsContext): Observable<unknown> {
    return defer(() => {
      const entry = this.commands.get(subject);
      if (!entry?.handlers.length) throw new NoHandlerError(subject);
      const handler = entry.handlers[entry.next++ % entry.handlers.length];
      const run = Promise.resolve(inTraceOf(ctx?.getHeaders(), () => handler(data)));
      this.running.add(run);
      void run.catch(() => undefined).finally(() => this.running.delete(run));
      return run;
    }).pipe(catchError((error: unknown) => throwError(() => toWireError(error))));
  }

  private fanOut(subject: string, data: unknown, ctx?: NatsContext): void {
    const subscribers = [...(this.facts.get(subject)?.subscribers ?? [])];
    for (const subscriber of subscribers) {
      try {
        // Each subscriber gets its own copy, as it would from another process.
        inTraceOf(ctx?.getHeaders(), () => subscriber(subscribers.length > 1 ? structuredClone(data) : data));
      } catch (error) {
        this.logger.error(`a subscriber of ${subject} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  private async watch(): Promise<void> {
    for await (const status of this.connection.status()) {
      switch (status.type) {
        case Events.Disconnect:
          this.connected = false;
          this.disconnectedAt = Date.now();
          this.logger.warn(`lost the NATS connection to ${String(status.data)}; reconnecting`);
          break;
        case DebugEvents.Reconnecting:
          this.backoff.attempted();
          this.logger.debug?.(`reconnecting to ${String(status.data)} (attempt ${this.backoff.attemptCount})`);
          break;
        case Events.Reconnect:
          this.connected = true;
          this.logger.log(
            `reconnected to NATS at ${String(status.data)} after ${Date.now() - this.disconnectedAt} ms and ${this.backoff.attemptCount} attempt(s)`,
          );
          this.backoff.reset();
          break;
        case Events.LDM:
          this.logger.warn(`NATS server ${this.connection.getServer()} is entering lame duck mode; will move to another`);
          break;
        case Events.Error:
          this.logger.error(`NATS error: ${String(status.data)}`);
          break;
        default:
          break;
      }
    }
  }

  private assertOpen(subject: string, other: Map<string, unknown>, kind: string): void {
    if (this.closing) throw new BusUnavailableError(subject, 'the bus is closed');
    // Nest keys handlers by subject alone, and a subject is either a command or a fact.
    if (other.has(subject)) throw new Error(`${subject} already carries ${kind} on this bus`);
  }
}

/**
 * Stops a subscription without dropping what the server already routed to it: a plain
 * unsubscribe discards the messages still on their way, and each dropped request would wait out
 * its whole timeout. Drained, they reach Nest's server with no handler left, which answers
 * BUS.NO_HANDLER at once, and requestUntilDelivered sends them again (to another instance).
 */
function drainQuietly(sub: Subscription): Promise<void> {
  return sub.drain().catch(() => undefined);
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

async function waitUntil(done: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (!done()) {
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
