import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretVault, SecretsKeyring, TaskSecrets, generateSecretsKey, taskStreamId } from '@app/common';
import type { EventStore } from '@app/event-store';
import { createEmbeddedEventStore } from '@app/event-store/embedded/embedded-event-store';
import type { TaskEvent } from '@app/task-domain';
import { TASK_EVENT_SCHEMA_VERSIONS } from '@app/task-domain';
import { ConflictError } from '@app/common';
import { MAX_REDELIVERIES_PER_MESSAGE, WebhookConfig, projectDeliveries, readWebhookOutbox, requestWebhookRedelivery } from '@app/webhooks';
import type { WebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { startWebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { WebhookDispatcherService } from './webhook-dispatcher.service';

const TASK = 'task_0123456789abcdef0123456789abcdef';

describe('WebhookDispatcherService over a real embedded event store', () => {
  let dataDir: string;
  let store: EventStore;
  let receiver: WebhookReceiver;
  const dispatchers: WebhookDispatcherService[] = [];

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'webhook-dispatcher-'));
    store = await createEmbeddedEventStore({ dataDir });
    receiver = await startWebhookReceiver((_request, res) => res.writeHead(204).end());
  });
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((d) => d.onApplicationShutdown()));
    await receiver.close();
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /**
   * `shared`: several dispatchers on one store stand for the distributed mode (EVENT_STORE=postgres,
   * one dispatcher per orchestrator), where the claim's expected revision decides; by default the
   * embedded mode's one dispatcher.
   */
  const start = async (instance: number, mode: 'sole' | 'shared' = 'sole', over: EventStore = store) => {
    const env = {
      ...(mode === 'shared' ? { EVENT_STORE: 'postgres' } : {}),
      DATA_DIR: join(dataDir, `instance-${instance}`),
      WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      WEBHOOK_ALLOW_HOSTS: `127.0.0.1:${receiver.port}`,
    };
    const secrets = new TaskSecrets(new SecretVault(), new SecretsKeyring(generateSecretsKey()));
    const dispatcher = new WebhookDispatcherService(over, env, new WebhookConfig(env), secrets);
    dispatchers.push(dispatcher);
    await dispatcher.onApplicationBootstrap();
  };
  const append = (events: TaskEvent[], expected: number | 'no_stream') =>
    store.appendToStream(
      taskStreamId(TASK),
      events.map((e) => ({ type: e.type, data: e.data, schemaVersion: TASK_EVENT_SCHEMA_VERSIONS[e.type] })),
      expected,
    );
  const waitFor = async <T>(probe: () => Promise<T | undefined>, what: string): Promise<T> => {
    const until = Date.now() + 10_000;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  /** A task with a webhook at `path` of the receiver, whose first turn has completed (a `task.completed` is due). */
  const appendCompletedTask = (path: string) =>
    append(
      [
        {
          type: 'TaskCreated',
          data: {
            taskId: TASK,
            tenantId: 't',
            messageId: 'msg_1',
            text: 'hi',
            autoExecute: true,
            showInHistory: true,
            env: {},
            secretNames: [],
            files: [],
            webhookUrl: `${receiver.origin}${path}`,
          },
        },
        { type: 'TurnStarted', data: { turn: 1, messageId: 'msg_1' } },
        { type: 'TurnCompleted', data: { turn: 1 } },
      ],
      'no_stream',
    );
  const deliveries = async () => {
    const { messages, deliveryEvents } = await readWebhookOutbox(store, TASK);
    return projectDeliveries(
      messages.map((m) => ({ id: m.id, type: m.payload.type })),
      deliveryEvents,
    );
  };
  /** The task's one message once delivered after `attempts` attempts in all; undefined before. */
  const deliveredAfter = async (attempts: number) => {
    const [d] = await deliveries();
    return d?.status === 'delivered' && d.attempts.length === attempts ? d : undefined;
  };

  it('makes each attempt once although several dispatchers follow the same store (the claim decides)', async () => {
    await Promise.all([start(1, 'shared'), start(2, 'shared'), start(3, 'shared')]);
    const created: TaskEvent = {
      type: 'TaskCreated',
      data: {
        taskId: TASK,
        tenantId: 't',
        messageId: 'msg_1',
        text: 'hi',
        autoExecute: true,
        showInHistory: true,
        env: {},
        secretNames: [],
        files: [],
        webhookUrl: `${receiver.origin}/hook`,
      },
    };
    await append([created, { type: 'TurnStarted', data: { turn: 1, messageId: 'msg_1' } }], 'no_stream');
    await append([{ type: 'TurnCompleted', data: { turn: 1 } }], 2);
    const [delivery] = await waitFor(async () => {
      const { messages, deliveryEvents } = await readWebhookOutbox(store, TASK);
      const d = projectDeliveries(
        messages.map((m) => ({ id: m.id, type: m.payload.type })),
        deliveryEvents,
      );
      return d[0]?.status === 'delivered' ? d : undefined;
    }, 'the delivery');
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(1);
    expect(delivery.attempts).toHaveLength(1);
    expect((await readWebhookOutbox(store, TASK)).deliveryEvents.map((e) => e.type)).toEqual(['WebhookAttemptStarted', 'WebhookAttempted']);
  });

  it('makes one new round of a redelivered message, once, of two concurrent requests, with three dispatchers', async () => {
    await Promise.all([start(1, 'shared'), start(2, 'shared'), start(3, 'shared')]);
    await appendCompletedTask('/again');
    const [first] = await waitFor(async () => ((await deliveries())[0]?.status === 'delivered' ? deliveries() : undefined), 'the delivery');

    const requests = await Promise.allSettled([
      requestWebhookRedelivery(store, TASK, first.id),
      requestWebhookRedelivery(store, TASK, first.id),
    ]);
    expect(requests.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(requests.find((r): r is PromiseRejectedResult => r.status === 'rejected')!.reason).toBeInstanceOf(ConflictError);
    const [again] = await waitFor(async () => {
      const d = await deliveries();
      return d[0]?.status === 'delivered' && d[0].attempts.length === 2 ? d : undefined;
    }, 'the redelivery');
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1].headers['webhook-id']).toBe(first.id);
    expect(receiver.received[1].body).toBe(receiver.received[0].body);
    expect(again.attempts).toHaveLength(2);
    expect((await readWebhookOutbox(store, TASK)).deliveryEvents.map((e) => e.type)).toEqual([
      'WebhookAttemptStarted',
      'WebhookAttempted',
      'WebhookRedeliveryRequested',
      'WebhookAttemptStarted',
      'WebhookAttempted',
    ]);
  });

  it('delivers the messages of tasks it saw created without reading the store, claim then outcome (embedded mode)', async () => {
    let streamReads = 0;
    const counting: EventStore = Object.assign(Object.create(store) as EventStore, {
      readStream: (...args: Parameters<EventStore['readStream']>) => {
        streamReads++;
        return store.readStream(...args);
      },
    });
    await start(1, 'sole', counting);
    await appendCompletedTask('/kept');
    const delivery = await waitFor(() => deliveredAfter(1), 'the delivery');
    await new Promise((r) => setTimeout(r, 300));
    expect(streamReads).toBe(0);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0].headers['webhook-id']).toBe(delivery.id);
    const recorded = (await readWebhookOutbox(store, TASK)).deliveryEvents;
    expect(recorded.map((e) => [e.type, 'attempt' in e.data ? e.data.attempt : undefined])).toEqual([
      ['WebhookAttemptStarted', 1],
      ['WebhookAttempted', 1],
    ]);
  });

  it("refuses the losing one of two redeliveries even when the winner's round has ended before it reads again", async () => {
    await start(1);
    await appendCompletedTask('/race');
    const first = await waitFor(() => deliveredAfter(1), 'the delivery');
    // The loser reads and decides first, but its append waits until the winner's round is over.
    let loserRead!: () => void;
    const loserHasRead = new Promise<void>((resolve) => (loserRead = resolve));
    let letLoserAppend!: () => void;
    const loserMayAppend = new Promise<void>((resolve) => (letLoserAppend = resolve));
    const slowStore: EventStore = Object.assign(Object.create(store) as EventStore, {
      appendToStream: async (...args: Parameters<EventStore['appendToStream']>) => {
        loserRead();
        await loserMayAppend;
        return store.appendToStream(...args);
      },
    });
    const loser = requestWebhookRedelivery(slowStore, TASK, first.id);
    await loserHasRead;
    await requestWebhookRedelivery(store, TASK, first.id);
    await waitFor(() => deliveredAfter(2), 'the winning round');
    letLoserAppend();
    await expect(loser).rejects.toThrow(/a redelivery requested at the same time went ahead/);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(2);
  });

  it(`refuses a message's redelivery past ${MAX_REDELIVERIES_PER_MESSAGE} (a tenant cannot replay it in a loop)`, async () => {
    await start(1);
    await appendCompletedTask('/loop');
    const first = await waitFor(() => deliveredAfter(1), 'the delivery');
    for (let round = 1; round <= MAX_REDELIVERIES_PER_MESSAGE; round++) {
      await requestWebhookRedelivery(store, TASK, first.id);
      await waitFor(() => deliveredAfter(round + 1), `redelivery ${round}`);
    }
    await expect(requestWebhookRedelivery(store, TASK, first.id)).rejects.toThrow(
      new ConflictError(
        `webhook delivery ${first.id} has been redelivered ${MAX_REDELIVERIES_PER_MESSAGE} times, the most one message can be`,
      ),
    );
    expect(receiver.received).toHaveLength(MAX_REDELIVERIES_PER_MESSAGE + 1);
  });

  it('finds a message made due while it was not running, from its checkpoint', async () => {
    await start(1);
    await dispatchers[0].onApplicationShutdown();
    dispatchers.splice(0);
    const created: TaskEvent = {
      type: 'TaskCreated',
      data: {
        taskId: TASK,
        tenantId: 't',
        messageId: 'msg_1',
        text: 'hi',
        autoExecute: true,
        showInHistory: true,
        env: {},
        secretNames: [],
        files: [],
        webhookUrl: `${receiver.origin}/later`,
      },
    };
    await append([created, { type: 'TaskCancelled', data: { turn: 0, droppedMessageIds: ['msg_1'] } }], 'no_stream');
    await start(1);
    const got = await waitFor(async () => receiver.received[0], 'the message');
    expect(JSON.parse(got.body)).toMatchObject({ type: 'task.cancelled', data: { taskId: TASK, status: 'cancelled', turn: 0 } });
  });
});
