import { PassThrough } from 'node:stream';
import type { AllStreamRecordedEvent, AllStreamSubscription, ReadPosition } from '@eventstore/db-client';
import type { NewEvent, StoredEvent } from '../event-store.port';
import { recordedEvent } from '../testing/esdb-recorded-event';
import { waitFor } from '../testing/wait-for';
import { EsdbAppendedFeed } from './esdb-appended-feed';
import { decodeRecordedEvent, fromEsdbStreamName, toEventData } from './esdb-event-mapping';

const PREFIX = 'agentic.';

/** Stands in for the client's $all subscription: a readable of resolved events, plus unsubscribe(). */
class FakeSubscription extends PassThrough {
  unsubscribed = false;

  constructor(readonly from: ReadPosition) {
    super({ objectMode: true });
  }

  deliver(...events: AllStreamRecordedEvent[]): void {
    for (const event of events) this.write({ event, commitPosition: event.position.commit });
  }

  async unsubscribe(): Promise<void> {
    this.unsubscribed = true;
  }
}

/** Appends as ESDB would store them: consecutive log positions, revisions per stream. */
class FakeLog {
  private position = 1000n;
  private readonly revisions = new Map<string, bigint>();

  append(streamId: string, count: number): AllStreamRecordedEvent[] {
    return Array.from({ length: count }, (_, index) => {
      const event: NewEvent = { type: 'Counted', data: { index }, schemaVersion: 1 };
      const revision = this.revisions.get(streamId) ?? 0n;
      this.revisions.set(streamId, revision + 1n);
      this.position += 100n;
      return recordedEvent(toEventData(event, { index, size: count }), {
        streamName: PREFIX + streamId,
        revision,
        position: this.position,
      });
    });
  }
}

function setup(options: { committed?: number } = {}) {
  const subscriptions: FakeSubscription[] = [];
  const errors: unknown[] = [];
  const feed = new EsdbAppendedFeed({
    subscribe: (from) => {
      const subscription = new FakeSubscription(from);
      subscriptions.push(subscription);
      return subscription as unknown as AllStreamSubscription;
    },
    decode: (recorded) => {
      const streamId = fromEsdbStreamName(PREFIX, recorded.streamId);
      return streamId === undefined ? undefined : decodeRecordedEvent(recorded, streamId, { fromAll: true });
    },
    reportError: (error) => errors.push(error),
    startAfter: { commit: 1000n, prepare: 1000n },
    committed: options.committed ?? 1000,
    retry: { initialMs: 5, maxMs: 20 },
  });
  feed.start();
  const batches: (readonly StoredEvent[])[] = [];
  feed.subscribe((events) => batches.push(events));
  return { feed, subscriptions, errors, batches, log: new FakeLog(), current: () => subscriptions[subscriptions.length - 1] };
}

const keys = (batches: (readonly StoredEvent[])[]) =>
  batches.map((batch) => batch.map((e) => `${e.streamId}#${e.revision}@${e.globalPosition}`));
const expectedKeys = (...appends: AllStreamRecordedEvent[][]) =>
  appends.map((events) => events.map((e) => `${e.streamId.slice(PREFIX.length)}#${Number(e.revision) + 1}@${Number(e.position.commit)}`));

describe('EsdbAppendedFeed', () => {
  it('subscribes after the start position and delivers each append as one batch, in $all order', async () => {
    const { feed, current, batches, log } = setup();
    const [a, b, a2] = [log.append('a', 2), log.append('b', 1), log.append('a', 3)];

    current().deliver(...a, ...b, ...a2);
    await waitFor(() => batches.length === 3);
    expect(current().from).toEqual({ commit: 1000n, prepare: 1000n });
    expect(keys(batches)).toEqual(expectedKeys(a, b, a2));
    await feed.stop();
  });

  it('does not hand a listener the appends known to be committed before it subscribed', async () => {
    const { feed, current, log } = setup();
    const [before, after] = [log.append('a', 1), log.append('a', 1)];
    feed.noteCommitted(Number(before[0].position.commit));
    const late: (readonly StoredEvent[])[] = [];
    feed.subscribe((events) => late.push(events));

    current().deliver(...before, ...after);
    await waitFor(() => late.length === 1);
    expect(keys(late)).toEqual(expectedKeys(after));
    await feed.stop();
  });

  it('after an error resubscribes from the end of the last whole append and delivers the interrupted one whole', async () => {
    const { feed, subscriptions, current, batches, errors, log } = setup();
    const [a, b] = [log.append('a', 2), log.append('b', 2)];

    current().deliver(...a, b[0]);
    await waitFor(() => batches.length === 1);
    current().emit('error', new Error('connection reset'));
    await waitFor(() => subscriptions.length === 2);
    expect(subscriptions[0].unsubscribed).toBe(true);
    expect(current().from).toEqual(a[1].position);

    current().deliver(...b);
    await waitFor(() => batches.length === 2);
    expect(keys(batches)).toEqual(expectedKeys(a, b));
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/resubscribing in 5 ms/);
    expect((errors[0] as Error).cause).toEqual(new Error('connection reset'));
    await feed.stop();
  });

  it('backs off exponentially up to the maximum while the server keeps failing, and resets once events flow', async () => {
    const { feed, subscriptions, current, errors, batches, log } = setup();
    for (let attempt = 1; attempt <= 4; attempt++) {
      current().emit('error', new Error('unavailable'));
      await waitFor(() => subscriptions.length === attempt + 1);
    }
    current().deliver(...log.append('a', 1));
    await waitFor(() => batches.length === 1);
    current().emit('error', new Error('unavailable'));
    await waitFor(() => subscriptions.length === 6);

    expect(errors.map((e) => String(e).match(/in (\d+) ms/)?.[1])).toEqual(['5', '10', '20', '20', '5']);
    await feed.stop();
  });

  it('resubscribes when the server ends the subscription', async () => {
    const { feed, subscriptions, current } = setup();
    current().end();
    current().resume();
    await waitFor(() => subscriptions.length === 2);
    await feed.stop();
  });

  it('reports an unreadable event of ours and goes on with the next', async () => {
    const { feed, current, batches, errors, log } = setup();
    const [bad, good] = [log.append('a', 1), log.append('b', 1)];

    current().deliver({ ...bad[0], metadata: { note: 'written by another tool' } } as AllStreamRecordedEvent, ...good);
    await waitFor(() => batches.length === 1);
    expect(keys(batches)).toEqual(expectedKeys(good));
    expect(String(errors[0])).toMatch(/schemaVersion/);
    await feed.stop();
  });

  it('keeps delivering to other listeners when one throws', async () => {
    const { feed, current, batches, errors, log } = setup();
    feed.subscribe(() => {
      throw new Error('listener failure');
    });
    const [a, b] = [log.append('a', 1), log.append('b', 1)];

    current().deliver(...a, ...b);
    await waitFor(() => batches.length === 2);
    expect(errors.filter((e) => String(e).includes('listener failure'))).toHaveLength(2);
    await feed.stop();
  });

  it('stops delivering, unsubscribes and never resubscribes once stopped', async () => {
    const { feed, subscriptions, current, batches, log } = setup();
    const subscription = current();
    await feed.stop();

    expect(subscription.unsubscribed).toBe(true);
    subscription.deliver(...log.append('a', 1));
    subscription.emit('error', new Error('late'));
    await new Promise((r) => setTimeout(r, 30));
    expect(subscriptions).toHaveLength(1);
    expect(batches).toEqual([]);
  });
});
