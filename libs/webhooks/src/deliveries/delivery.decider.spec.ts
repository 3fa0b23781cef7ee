import { NotFoundError } from '@app/common';
import { DeciderSpecification } from '@app/common/testing/decider-spec';
import type { AttemptOutcome } from '../webhook-attempt';
import type { DeliveryCommand, RecordAttempt } from './delivery.decider';
import { MAX_REDELIVERIES_PER_MESSAGE, decideDelivery } from './delivery.decider';
import {
  ConcurrentWebhookRedeliveryError,
  UnknownWebhookDeliveryError,
  WebhookAttemptNotClaimedError,
  WebhookAttemptNotDueError,
  WebhookDeliveryEndedError,
  WebhookDeliveryPendingError,
  WebhookRedeliveryLimitError,
} from './delivery.errors';
import type { DeliveryEvent, WebhookAttemptedData } from './delivery.events';
import type { DeliveryState } from './delivery.state';
import { evolveDelivery, initialDeliveryState } from './delivery.state';

const spec = DeciderSpecification.for<DeliveryState, DeliveryCommand, DeliveryEvent>({
  decide: decideDelivery,
  evolve: evolveDelivery,
  initialState: initialDeliveryState,
});
const fold = (events: DeliveryEvent[]) => events.reduce(evolveDelivery, initialDeliveryState());

const ID = 'wh_0123_3';
const TYPE = 'task.completed';
const LEASE_MS = 20_000;
const RETRY = { retryBaseMs: 1_000, maxAttempts: 3 };
/** Milliseconds after 2026-11-25T00:00:00Z, as ISO 8601. */
const t = (ms: number) => new Date(Date.UTC(2026, 10, 25) + ms).toISOString();

const due = (messageId = ID): DeliveryEvent => ({ type: 'WebhookMessageDue', data: { messageId, type: TYPE } });
const started = (attempt: number, at = t(attempt * 10_000), messageId = ID): DeliveryEvent => ({
  type: 'WebhookAttemptStarted',
  data: { messageId, type: TYPE, attempt, at, leaseUntil: new Date(Date.parse(at) + LEASE_MS).toISOString() },
});
const attempted = (attempt: number, change: Partial<WebhookAttemptedData> = {}): DeliveryEvent => ({
  type: 'WebhookAttempted',
  data: {
    messageId: ID,
    type: TYPE,
    attempt,
    at: t(attempt * 10_000),
    statusCode: 500,
    error: 'the receiver answered 500',
    durationMs: 3,
    delivered: false,
    ...change,
  },
});
const failed = (attempt: number, nextAttemptAt?: string) => attempted(attempt, nextAttemptAt ? { nextAttemptAt } : {});
const delivered = (attempt: number) => attempted(attempt, { statusCode: 204, error: undefined, delivered: true });
const redelivery = (at = t(100_000)): DeliveryEvent => ({ type: 'WebhookRedeliveryRequested', data: { messageId: ID, type: TYPE, at } });

const start = (at: string, messageId = ID): DeliveryCommand => ({ type: 'StartAttempt', data: { messageId, at, leaseMs: LEASE_MS } });
const answered = (statusCode: number): AttemptOutcome =>
  statusCode < 300
    ? { attempt: { at: t(0), statusCode, durationMs: 4 }, delivered: true }
    : { attempt: { at: t(0), statusCode, error: `the receiver answered ${statusCode}`, durationMs: 4 }, delivered: false };
const record = (outcome: AttemptOutcome, change: Partial<RecordAttempt['data']> = {}): DeliveryCommand => ({
  type: 'RecordAttempt',
  data: { messageId: ID, outcome, endedAt: t(50), retry: RETRY, jitter: 0, ...change },
});
const redeliver = (redeliveriesSeen?: number, messageId = ID): DeliveryCommand => ({
  type: 'RequestRedelivery',
  data: { messageId, at: t(200_000), ...(redeliveriesSeen === undefined ? {} : { redeliveriesSeen }) },
});
/** `rounds` ended rounds: the first delivery, then one redelivered round after another, each delivered at once. */
const roundsEnded = (rounds: number): DeliveryEvent[] => [
  due(),
  started(1),
  delivered(1),
  ...Array.from({ length: rounds - 1 }, () => [redelivery(), started(1), delivered(1)]).flat(),
];

describe('webhook delivery decider', () => {
  describe('claiming an attempt (StartAttempt)', () => {
    it('claims the first attempt of a message just made due, leased for leaseMs from its start', () =>
      spec
        .given([due()])
        .when(start(t(5)))
        .then([
          {
            type: 'WebhookAttemptStarted',
            data: { messageId: ID, type: TYPE, attempt: 1, at: t(5), leaseUntil: t(5 + LEASE_MS) },
          },
        ]));
    it('claims the next attempt once a failed attempt is due again, not before', () => {
      const retrying = [due(), started(1), failed(1, t(60_000))];
      spec
        .given(retrying)
        .when(start(t(60_000)))
        .then([started(2, t(60_000))]);
      spec
        .given(retrying)
        .when(start(t(59_999)))
        .thenThrows(WebhookAttemptNotDueError, new RegExp(`${ID} is not due before ${t(60_000)}`));
    });
    it("leaves another dispatcher's claim alone until its lease runs out, then claims the next attempt", () => {
      const claimed = [due(), started(1, t(0))];
      spec
        .given(claimed)
        .when(start(t(LEASE_MS - 1)))
        .thenThrows(WebhookAttemptNotDueError);
      spec
        .given(claimed)
        .when(start(t(LEASE_MS)))
        .then([started(2, t(LEASE_MS))]);
    });
    it('refuses an attempt of a delivered or failed message', () => {
      spec
        .given([due(), started(1), delivered(1)])
        .when(start(t(90_000)))
        .thenThrows(WebhookDeliveryEndedError, /is delivered/);
      spec
        .given([due(), started(1), failed(1)])
        .when(start(t(90_000)))
        .thenThrows(WebhookDeliveryEndedError, /is failed/);
    });
    it('counts attempts anew in a redelivered round', () =>
      spec
        .given([...roundsEnded(1), redelivery()])
        .when(start(t(100_000)))
        .then([started(1, t(100_000))]));
    it('answers NOT_FOUND for a message no task event made due', () => {
      spec
        .given([])
        .when(start(t(0)))
        .thenThrows(UnknownWebhookDeliveryError, /webhook delivery wh_0123_3 not found/);
      spec
        .given([due('wh_0123_9')])
        .when(start(t(0)))
        .thenThrows(NotFoundError);
    });
  });

  describe('recording an attempt (RecordAttempt)', () => {
    it('records a 2xx as delivered, with no next attempt', () =>
      spec
        .given([due(), started(1)])
        .when(record(answered(204)))
        .then([
          {
            type: 'WebhookAttempted',
            data: { messageId: ID, type: TYPE, attempt: 1, at: t(0), statusCode: 204, durationMs: 4, delivered: true },
          },
        ]));
    it('records a failure with its status and error, retried WEBHOOK_RETRY_BASE_MS after the attempt ended', () =>
      spec
        .given([due(), started(1)])
        .when(record(answered(500)))
        .then([
          {
            type: 'WebhookAttempted',
            data: {
              messageId: ID,
              type: TYPE,
              attempt: 1,
              at: t(0),
              statusCode: 500,
              error: 'the receiver answered 500',
              durationMs: 4,
              delivered: false,
              nextAttemptAt: t(50 + 1_000),
            },
          },
        ]));
    it('records an attempt that got no answer at all (a timeout, a refused connection) without a status code', () => {
      const noAnswer: AttemptOutcome = { attempt: { at: t(0), error: 'timed out after 10000 ms', durationMs: 10_000 }, delivered: false };
      const [event] = spec
        .given([due(), started(1)])
        .when(record(noAnswer))
        .events();
      expect(event.data).not.toHaveProperty('statusCode');
      expect(event.data).toMatchObject({ error: 'timed out after 10000 ms', nextAttemptAt: t(50 + 1_000) });
    });
    it('doubles the wait after each failed attempt, plus the jitter drawn (up to 20%)', () => {
      const secondClaimed = [due(), started(1), failed(1, t(20_000)), started(2)];
      const nextAttemptAt = (jitter: number) =>
        spec
          .given(secondClaimed)
          .when(record(answered(503), { jitter }))
          .events()
          .map((e) => (e.type === 'WebhookAttempted' ? e.data.nextAttemptAt : undefined));
      expect(nextAttemptAt(0)).toEqual([t(50 + 2_000)]);
      expect(nextAttemptAt(0.5)).toEqual([t(50 + 2_200)]);
    });
    it('gives up after the last attempt WEBHOOK_MAX_ATTEMPTS allows: recorded without a next attempt, the delivery failed', () => {
      const lastClaimed = [due(), started(1), failed(1, t(1)), started(2), failed(2, t(2)), started(3)];
      const gaveUp = spec
        .given(lastClaimed)
        .when(record(answered(500)))
        .events();
      expect(gaveUp).toEqual([attempted(3, { at: t(0), durationMs: 4 })]);
      expect(fold([...lastClaimed, ...gaveUp])).toMatchObject({ status: 'failed', attempts: { length: 3 } });
    });
    it('records the attempt its claim numbered, counted within the round', () =>
      spec
        .given([...roundsEnded(1), redelivery(), started(1)])
        .when(record(answered(204)))
        .then([attempted(1, { at: t(0), statusCode: 204, error: undefined, durationMs: 4, delivered: true })]));
    it('refuses an outcome with no claim to record it against', () => {
      spec
        .given([due()])
        .when(record(answered(204)))
        .thenThrows(WebhookAttemptNotClaimedError);
      spec
        .given([due(), started(1), failed(1, t(1))])
        .when(record(answered(204)))
        .thenThrows(WebhookAttemptNotClaimedError);
      spec
        .given([due(), started(1), delivered(1)])
        .when(record(answered(204)))
        .thenThrows(WebhookAttemptNotClaimedError);
    });
    it('answers NOT_FOUND for a message no task event made due', () =>
      spec
        .given([])
        .when(record(answered(204)))
        .thenThrows(UnknownWebhookDeliveryError));
  });

  describe('redelivering (RequestRedelivery)', () => {
    it('starts a new round of a delivered message', () =>
      spec
        .given(roundsEnded(1))
        .when(redeliver())
        .then([redelivery(t(200_000))]));
    it('starts a new round of a failed message', () =>
      spec
        .given([due(), started(1), failed(1)])
        .when(redeliver(0))
        .then([redelivery(t(200_000))]));
    it.each([
      ['due and not attempted yet', [due()]],
      ['being attempted', [due(), started(1)]],
      ['waiting for a retry', [due(), started(1), failed(1, t(20_000))]],
      ['already redelivered, its round not begun', [...roundsEnded(1), redelivery()]],
    ])('refuses a message that is still pending: %s', (_what, given) =>
      spec
        .given(given)
        .when(redeliver())
        .thenThrows(WebhookDeliveryPendingError, /still pending .*only a delivered or failed message can be redelivered/),
    );
    it(`refuses past ${MAX_REDELIVERIES_PER_MESSAGE} redeliveries of one message`, () => {
      spec
        .given(roundsEnded(MAX_REDELIVERIES_PER_MESSAGE))
        .when(redeliver())
        .then([redelivery(t(200_000))]);
      spec
        .given(roundsEnded(MAX_REDELIVERIES_PER_MESSAGE + 1))
        .when(redeliver())
        .thenThrows(WebhookRedeliveryLimitError, /redelivered 10 times, the most one message can be/);
    });
    it('refuses a request whose twin went ahead since it first read, even when that round has ended', () =>
      spec
        .given(roundsEnded(2))
        .when(redeliver(0))
        .thenThrows(ConcurrentWebhookRedeliveryError, /a redelivery requested at the same time went ahead/));
    it('answers NOT_FOUND for a message no task event made due', () =>
      spec
        .given([due('wh_0123_9')])
        .when(redeliver())
        .thenThrows(UnknownWebhookDeliveryError));
  });

  describe('state', () => {
    it('is pending and due at once when its message is made due, and stays so if that is folded twice', () =>
      expect(fold([due(), due()])).toEqual({
        status: 'pending',
        messageId: ID,
        type: TYPE,
        attempts: [],
        redeliveries: 0,
        lastAttempt: 0,
        dueAt: 0,
      }));
    it("leaves the events of the stream's other messages alone", () => {
      const other = { ...started(1, t(0), 'wh_0123_9') };
      expect(fold([due(), other])).toEqual(fold([due()]));
    });
    it("stands where the last recorded event says: a late outcome after another dispatcher's claim, the highest attempt kept", () => {
      // Dispatcher A's claim ran out, B claimed attempt 2, and then A recorded attempt 1.
      const state = fold([due(), started(1), started(2, t(LEASE_MS + 10_000)), failed(1, t(90_000))]);
      expect(state).toMatchObject({ status: 'pending', dueAt: Date.parse(t(90_000)), lastAttempt: 2 });
      expect(state).not.toHaveProperty('claim');
    });
    it("lists every round's attempts after a redelivery, and counts the redeliveries", () =>
      expect(fold([...roundsEnded(3), redelivery()])).toMatchObject({
        status: 'pending',
        dueAt: 0,
        lastAttempt: 0,
        redeliveries: 3,
        attempts: { length: 3 },
      }));
  });
});
