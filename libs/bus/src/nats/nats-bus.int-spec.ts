import 'reflect-metadata';
import { Controller, LoggerService, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientNats, EventPattern, MessagePattern, MicroserviceOptions, RpcException, Transport } from '@nestjs/microservices';
import { NatsConnection, nuid } from 'nats';
import { lastValueFrom } from 'rxjs';
import { createBusFromConfig } from '../bus.config';
import { BusTimeoutError, BusUnavailableError, NoHandlerError, RemoteError } from '../bus.port';
import { describeBusContract } from '../testing/bus.contract';
import { assertNatsAnswers, natsUrlForTests, PrivateNatsServer, startPrivateNatsServer } from '../testing/nats-server';
import { NamespacedBus } from '../namespaced-bus';
import { DEFAULT_NATS_QUEUE, NatsBus, NatsBusOptions, createNatsBus } from './nats-bus';

const url = natsUrlForTests();
const subject = (what: string) => `test.nats-bus.${nuid.next()}.${what}`;

class RecordingLogger implements LoggerService {
  readonly lines: string[] = [];
  log = (m: unknown) => this.lines.push(`log ${String(m)}`);
  warn = (m: unknown) => this.lines.push(`warn ${String(m)}`);
  error = (m: unknown) => this.lines.push(`error ${String(m)}`);
  debug = (m: unknown) => this.lines.push(`debug ${String(m)}`);
  has = (text: string) => this.lines.some((l) => l.includes(text));
}

describeBusContract('nats', async () => {
  const bus = await createNatsBus({ servers: url, drainTimeoutMs: 200, logger: new RecordingLogger() });
  return { bus, cleanup: () => bus.close() };
});

describeBusContract('nats, subjects under a namespace (NATS_SUBJECT_PREFIX)', async () => {
  const bus = await createNatsBus({ servers: url, drainTimeoutMs: 200, logger: new RecordingLogger() });
  return { bus: new NamespacedBus(bus, `ns-${nuid.next()}`), cleanup: () => bus.close() };
});

describe('NatsBus', () => {
  let buses: NatsBus[] = [];
  const open = async (options: Partial<NatsBusOptions> = {}) => {
    const bus = await createNatsBus({ servers: url, drainTimeoutMs: 500, logger: new RecordingLogger(), ...options });
    buses.push(bus);
    return bus;
  };

  beforeAll(() => assertNatsAnswers(url));
  afterEach(async () => {
    await Promise.all(buses.map((b) => b.close()));
    buses = [];
  });

  it('shares the requests of a subject between instances in the queue group, each request answered once', async () => {
    const [a, b, requester] = await Promise.all([open(), open(), open()]);
    const s = subject('share');
    const seen = { a: [] as number[], b: [] as number[] };
    a.handle<{ i: number }, string>(s, async ({ i }) => (seen.a.push(i), 'a'));
    b.handle<{ i: number }, string>(s, async ({ i }) => (seen.b.push(i), 'b'));
    await Promise.all([a.flush(), b.flush()]);

    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => requester.request<{ i: number }, string>(s, { i })));

    expect(replies.filter((r) => r === 'a')).toHaveLength(seen.a.length);
    expect([...seen.a, ...seen.b].sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(seen.a.length).toBeGreaterThan(0);
    expect(seen.b.length).toBeGreaterThan(0);
  });

  it('delivers a fact to every subscriber instance, once each', async () => {
    const [a, b, publisher] = await Promise.all([open(), open(), open()]);
    const s = subject('fact');
    const heard = { a: [] as unknown[], b: [] as unknown[] };
    a.subscribe(s, (p) => heard.a.push(p));
    b.subscribe(s, (p) => heard.b.push(p));
    await Promise.all([a.flush(), b.flush()]);

    publisher.publish(s, { n: 1 });
    publisher.publish(s, { n: 2 });
    await waitFor(() => heard.a.length === 2 && heard.b.length === 2);
    await publisher.flush();
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(heard.a).toEqual([{ n: 1 }, { n: 2 }]);
    expect(heard.b).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('times out with BusTimeoutError when the handler in another instance does not answer in time', async () => {
    const [handler, requester] = await Promise.all([open(), open()]);
    const s = subject('slow');
    handler.handle(s, () => new Promise(() => undefined));
    await handler.flush();
    const started = Date.now();

    await expect(requester.request(s, {}, { timeoutMs: 300 })).rejects.toBeInstanceOf(BusTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('fails with NoHandlerError from the server "no responders" status, without waiting for the timeout', async () => {
    const requester = await open();
    const started = Date.now();

    await expect(requester.request(subject('nobody'), {}, { timeoutMs: 10_000 })).rejects.toBeInstanceOf(NoHandlerError);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('answers a reply larger than the server accepts with RemoteError BUS.PAYLOAD_TOO_LARGE, not a timeout', async () => {
    const [handler, requester] = await Promise.all([open(), open()]);
    const s = subject('huge');
    handler.handle(s, async () => 'x'.repeat(2 * 1024 * 1024)); // the server's default max_payload is 1 MiB
    await handler.flush();

    await expect(requester.request(s, {}, { timeoutMs: 10_000 })).rejects.toMatchObject({
      name: RemoteError.name,
      remoteCode: 'BUS.PAYLOAD_TOO_LARGE',
    });
  });

  it('close() lets a running handler answer, then stops taking requests', async () => {
    const [handler, requester] = await Promise.all([open(), open()]);
    const s = subject('drain');
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    handler.handle(s, async () => {
      started();
      await new Promise((resolve) => setTimeout(resolve, 300));
      return 'answered';
    });
    await handler.flush();

    const reply = requester.request(s, {});
    await running;
    await handler.close();

    await expect(reply).resolves.toBe('answered');
    await expect(requester.request(s, {}, { timeoutMs: 2_000 })).rejects.toBeInstanceOf(NoHandlerError);
    await expect(handler.request(s, {})).rejects.toBeInstanceOf(BusUnavailableError);
  });

  it('answers every request routed to a handler that unsubscribes (it or NoHandlerError), never leaving one to time out', async () => {
    // A stopping instance unsubscribes while requests are on their way to it: the server has
    // already routed them there. Dropped, each would wait out its whole timeout (a sandbox
    // restart failed a turn that way); answered NoHandlerError, requestUntilDelivered sends it again.
    const [handler, requester] = await Promise.all([open(), open()]);
    const s = subject('unsubscribing');
    let unsubscribe = () => undefined as void;
    let answered = 0;
    unsubscribe = handler.handle(s, async () => {
      unsubscribe();
      answered++;
      return 'answered';
    });
    await handler.flush();

    const outcomes = await Promise.all(
      Array.from({ length: 300 }, () =>
        requester.request(s, {}, { timeoutMs: 3_000 }).then(
          () => 'answered',
          (error: Error) => error.name,
        ),
      ),
    );

    expect(outcomes.filter((o) => o === 'BusTimeoutError')).toHaveLength(0);
    expect(outcomes.filter((o) => o === 'answered')).toHaveLength(answered);
    expect(outcomes.filter((o) => o === 'NoHandlerError').length).toBeGreaterThan(0);
  });

  it('close() answers the requests already routed to it NoHandlerError, never leaving one to time out', async () => {
    const [handler, requester] = await Promise.all([open(), open()]);
    const s = subject('closing');
    let closing: Promise<void> | undefined;
    handler.handle(s, async () => {
      closing ??= handler.close();
      return 'answered';
    });
    await handler.flush();

    const outcomes = await Promise.all(
      Array.from({ length: 300 }, () =>
        requester.request(s, {}, { timeoutMs: 3_000 }).then(
          () => 'answered',
          (error: Error) => error.name,
        ),
      ),
    );
    await closing;

    expect(outcomes.filter((o) => o === 'BusTimeoutError')).toHaveLength(0);
    expect(outcomes.filter((o) => o === 'answered').length).toBeGreaterThan(0);
  });

  it('is what createBusFromConfig builds for BUS=nats', async () => {
    const bus = await createBusFromConfig({ BUS: 'nats', NATS_URL: url });
    try {
      expect(bus).toBeInstanceOf(NatsBus);
      const s = subject('config');
      bus.handle<string, string>(s, async (p) => p.toUpperCase());
      await expect(bus.request(s, 'ok')).resolves.toBe('OK');
    } finally {
      await bus.close();
    }
  });

  describe('when its NATS server restarts', () => {
    let server: PrivateNatsServer;

    beforeAll(async () => (server = await startPrivateNatsServer()));
    afterAll(() => server?.dispose());

    it('fails requests at once while disconnected, reconnects with backoff, logs it, and carries commands and facts again', async () => {
      const reconnect = { initialDelayMs: 50, maxDelayMs: 200 };
      const logs = { handler: new RecordingLogger(), requester: new RecordingLogger() };
      const handler = await open({ servers: server.url, reconnect, logger: logs.handler });
      const requester = await open({ servers: server.url, reconnect, logger: logs.requester });
      const command = subject('restart.command');
      const fact = subject('restart.fact');
      const heard: unknown[] = [];
      handler.handle<{ a: number }, number>(command, async ({ a }) => a * 2);
      handler.subscribe(fact, (p) => heard.push(p));
      await handler.flush();
      await expect(requester.request(command, { a: 1 })).resolves.toBe(2);

      await server.kill();
      await waitFor(() => logs.requester.has('lost the NATS connection') && logs.handler.has('lost the NATS connection'));
      await expect(requester.request(command, { a: 2 })).rejects.toBeInstanceOf(BusUnavailableError);
      await new Promise((resolve) => setTimeout(resolve, 500)); // a few failed attempts
      await server.start();

      await waitFor(() => logs.requester.has('reconnected to NATS') && logs.handler.has('reconnected to NATS'), 5_000);
      await handler.flush();
      await expect(requester.request(command, { a: 21 })).resolves.toBe(42);
      requester.publish(fact, { n: 1 });
      await waitFor(() => heard.length === 1);
      expect(heard).toEqual([{ n: 1 }]);
      expect(logs.requester.lines.filter((l) => l.startsWith('debug reconnecting')).length).toBeGreaterThan(1);
    }, 20_000);
  });

  describe("with Nest's own NATS transport on the other side", () => {
    const interop = { command: subject('nest.command'), failing: subject('nest.failing'), fact: subject('nest.fact') };
    const heardByNest: unknown[] = [];

    @Controller()
    class InteropController {
      @MessagePattern(interop.command, { queue: DEFAULT_NATS_QUEUE })
      double({ a }: { a: number }) {
        return { b: a * 2 };
      }

      @MessagePattern(interop.failing, { queue: DEFAULT_NATS_QUEUE })
      fail() {
        throw new RpcException({ code: 'TOOL.FAILED', message: 'boom' });
      }

      @EventPattern(interop.fact)
      hear(payload: unknown) {
        heardByNest.push(payload);
      }
    }

    @Module({ controllers: [InteropController] })
    class InteropModule {}

    it('a @MessagePattern answers bus.request, an @EventPattern hears bus.publish, and ClientNats.send reaches bus.handle', async () => {
      const app = await NestFactory.createMicroservice<MicroserviceOptions>(InteropModule, {
        transport: Transport.NATS,
        options: { servers: [url] },
        logger: false,
      });
      const client = new ClientNats({ servers: [url] });
      try {
        await app.listen();
        await app.unwrap<NatsConnection>().flush();
        const bus = await open();

        await expect(bus.request(interop.command, { a: 21 })).resolves.toEqual({ b: 42 });
        await expect(bus.request(interop.failing, {})).rejects.toMatchObject({
          name: RemoteError.name,
          remoteCode: 'TOOL.FAILED',
          message: 'boom',
        });
        bus.publish(interop.fact, { n: 1 });
        await waitFor(() => heardByNest.length === 1);
        expect(heardByNest).toEqual([{ n: 1 }]);

        const s = subject('bus.command');
        bus.handle<{ a: number }, number>(s, async ({ a }) => a + 1);
        await bus.flush();
        await expect(lastValueFrom(client.send(s, { a: 1 }))).resolves.toBe(2);
      } finally {
        await client.close();
        await app.close();
      }
    });
  });
});

async function waitFor(done: () => boolean, timeoutMs = 3_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
