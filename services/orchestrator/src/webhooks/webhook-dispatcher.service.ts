import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { join } from 'node:path';
import { TaskSecrets, dataDirFromEnv, runWithLogContext } from '@app/common';
import { EVENT_STORE, EventStore, ExpectedRevisionConflictError, StoredEvent, eventStoreIsProcessExclusive } from '@app/event-store';
import { ServiceMetrics } from '@app/metrics';
import { ProjectionCheckpointFile } from '@app/read-models';
import { RUNTIME_ENV } from '@app/runtime';
import {
  KnownDeliveryState,
  RecordAttempt,
  WebhookAttemptNotDueError,
  WebhookConfig,
  WebhookDeliveryEndedError,
  WebhookDeliveryEvent,
  WebhookOutbox,
  WebhookSender,
  decideDelivery,
  deliveryStateOf,
  evolveKnownDelivery,
  expectedDeliveryRevision,
  toNewWebhookEvents,
  webhookStreamId,
} from '@app/webhooks';
import { KeptOutboxes } from './kept-outboxes';
import { PendingMessages } from './pending-messages';
import { redactedPayload } from './redacted-payload';

interface DispatcherCheckpoint {
  readonly version: 1;
  /** Every message made due by an event at or before this global position is delivered or failed. */
  readonly position: number;
}

const PAGE_SIZE = 500;
/** How long past WEBHOOK_TIMEOUT_MS a claim holds: time to record the outcome before another dispatcher may take over. */
const LEASE_MARGIN_MS = 10_000;
/** The deliveries metric's outcome of an attempt, by where it left the delivery. */
const METRIC_OUTCOME: Record<KnownDeliveryState['status'], string> = { delivered: 'delivered', pending: 'failed', failed: 'gave_up' };

/**
 * The webhook outbox's dispatcher (docs/api.md "Webhooks"). It lives in the orchestrator because
 * the orchestrator is the service that already follows the event store's feed to act on task
 * events; the all-in-one process (npm start) includes it, and in the distributed mode every
 * orchestrator runs one.
 *
 * Nothing here is the truth: which messages are due comes from the task streams
 * (webhookMessagesOf), and what was attempted from the WebhookAttempted events of each task's
 * `webhooks-<taskId>` stream. The pending map is rebuilt by scanning the store's global order from
 * the checkpoint, which only ever moves past events whose messages are all delivered or failed; a
 * lost or stale checkpoint file only means a longer scan. Each task's outbox is kept in memory,
 * updated from the feed's events as they are scanned, so a message made due by a task this
 * dispatcher saw created costs no read (kept-outboxes.ts). Each attempt is first claimed
 * (WebhookAttemptStarted, appended with the delivery stream's expected revision), so of several
 * dispatchers exactly one makes it; one that dies mid-attempt leaves a claim whose lease runs
 * out, and the message is due again then (delivery is at least once: the receiver may see that
 * attempt again, with the same `webhook-id`). In the embedded mode this is the store's only
 * dispatcher, and the claim is recorded with the outcome, after the send (see `attempt`).
 *
 * What to append, and when a message is due, is the delivery decider's (libs/webhooks, deliveries/);
 * this class orchestrates: it follows the feed, keeps timers and leases, and posts the requests.
 */
@Injectable()
export class WebhookDispatcherService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookDispatcher');
  private readonly pending = new PendingMessages();
  private readonly outboxes: KeptOutboxes;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly checkpointFile: ProjectionCheckpointFile<DispatcherCheckpoint>;
  private readonly sender?: WebhookSender;
  /** The embedded mode: this is the only dispatcher of the store (see `attempt`). */
  private readonly soleDispatcher: boolean;
  /** How long a claim holds: the attempt's WEBHOOK_TIMEOUT_MS, and time to record its outcome. */
  private readonly leaseMs: number;
  private scanned = 0;
  /** Batches the store's feed handed over (each once, in global order) and not yet scanned. */
  private appended: StoredEvent[] = [];
  private scanning: Promise<void> = Promise.resolve();
  private rescan = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private unsubscribe?: () => void;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(RUNTIME_ENV) env: NodeJS.ProcessEnv,
    private readonly config: WebhookConfig,
    private readonly secrets: TaskSecrets,
    @Optional() private readonly metrics?: ServiceMetrics,
  ) {
    this.outboxes = new KeptOutboxes(store);
    this.checkpointFile = new ProjectionCheckpointFile(join(dataDirFromEnv(env), 'webhooks', 'dispatcher-checkpoint.json'));
    if (config.signingKey) this.sender = new WebhookSender(config, config.signingKey);
    this.soleDispatcher = eventStoreIsProcessExclusive(env);
    this.leaseMs = config.timeoutMs + LEASE_MARGIN_MS;
  }

  async onApplicationBootstrap(): Promise<void> {
    // Without WEBHOOK_SECRET no task can have been given a webhook URL (creates refuse it), and nothing could be signed.
    if (!this.sender) return;
    const saved = await this.checkpointFile.load();
    this.scanned = saved?.version === 1 ? saved.position : 0;
    this.unsubscribe = this.store.onAppended((events) => {
      this.appended.push(...events);
      void this.scan();
    });
    this.checkpointFile.startAutosave(() => this.checkpoint());
    await this.scan();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    await this.scanning;
    await Promise.allSettled(this.inFlight.values());
    await this.checkpointFile.stop(() => this.checkpoint());
    await this.sender?.close();
  }

  /**
   * Goes through the store's global order past what was scanned; serialised, and one more pass
   * when asked for meanwhile. The feed's batches are used as they are when they follow on from
   * what was scanned (the usual case: no read at all for an event that makes nothing due); after a
   * start or a gap the store is read from the last scanned position instead.
   */
  private scan(): Promise<void> {
    if (this.rescan) return this.scanning;
    this.rescan = true;
    this.scanning = this.scanning
      .then(async () => {
        this.rescan = false;
        const appended = this.appended.filter((e) => e.globalPosition > this.scanned);
        this.appended = [];
        if (appended.length > 0 && appended[0].globalPosition === this.scanned + 1) {
          // Without an await when nothing needs reading (the usual case): every await here would
          // put the attempts behind all the continuations the same commit released (the agent
          // loops of every task in it), and the messages would wait for them.
          const toRead = this.applyTouched(appended);
          if (toRead.size > 0) await this.readTouched(toRead);
          this.scanned = appended[appended.length - 1].globalPosition;
        } else {
          for (;;) {
            const events = await this.store.readAll({ after: this.scanned, maxCount: PAGE_SIZE });
            await this.readTouched(this.applyTouched(events));
            if (events.length > 0) this.scanned = events[events.length - 1].globalPosition;
            if (events.length < PAGE_SIZE) break;
          }
        }
        this.checkpointFile.markDirty();
        this.schedule();
      })
      .catch((error: unknown) => this.logger.error(`reading the event store failed: ${describe(error)}`));
    return this.scanning;
  }

  /**
   * Applies `events` (in global order) to the outboxes kept in memory, and makes the pending map
   * agree with each outbox they changed. Returns the tasks whose outbox must be read from the
   * store (readTouched), with the position of their first change.
   */
  private applyTouched(events: readonly StoredEvent[]): Map<string, number> {
    const { changed, toRead } = this.outboxes.applyFeed(events);
    for (const [taskId, { outbox, position }] of changed) this.pending.reconcile(taskId, outbox.outbox, position);
    return toRead;
  }

  /** Reads the outboxes applyTouched could not keep up to date (by task, from the position of their first change), all at once. */
  private async readTouched(toRead: ReadonlyMap<string, number>): Promise<void> {
    const read = await Promise.all(
      [...toRead].map(async ([taskId, position]) => ({ taskId, position, outbox: await this.outboxes.load(taskId) })),
    );
    for (const { taskId, position, outbox } of read) this.pending.reconcile(taskId, outbox.outbox, position);
  }

  /** Where a scan must start to find every message still pending. */
  private checkpoint(): DispatcherCheckpoint {
    return { version: 1, position: this.pending.checkpoint(this.scanned) };
  }

  /** Sends the messages due now; arms the timer for the next one. */
  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const now = Date.now();
    const busy = (id: string) => this.inFlight.has(id);
    for (let due = this.pending.takeDue(now, busy); due !== undefined; due = this.pending.takeDue(now, busy)) {
      this.startAttempt(due.id, due.taskId);
    }
    const next = this.pending.nextDueAt();
    if (next !== undefined) this.timer = setTimeout(() => this.schedule(), Math.min(next - now, 2 ** 31 - 1));
  }

  private startAttempt(messageId: string, taskId: string): void {
    // The attempt and its failure are logged in the task's scope; the rescheduling after it is not the task's.
    const attempted = runWithLogContext({ taskId }, () =>
      this.attempt(messageId, taskId).catch((error: unknown) => {
        this.logger.error(`webhook ${messageId} of task ${taskId}: ${describe(error)}`);
        // Tried again later rather than never: the store or the network may be back by then.
        this.pending.retryAt(messageId, Date.now() + this.config.retryBaseMs);
      }),
    );
    const work = attempted.finally(() => {
      this.inFlight.delete(messageId);
      // Its queue entry was used up when the attempt started: still pending (a retry, or a claim
      // lost to another dispatcher), it is queued again at the time now recorded.
      this.pending.requeue(messageId);
      this.checkpointFile.markDirty();
      this.schedule();
    });
    this.inFlight.set(messageId, work);
  }

  /**
   * One attempt of one message, as the delivery decider rules: claimed, made, recorded. The claim
   * is decided before the request in both modes; the distributed mode appends it then, at the
   * delivery stream's revision as kept, the embedded mode with the outcome.
   */
  private async attempt(messageId: string, taskId: string): Promise<void> {
    const found = this.pending.get(messageId)?.foundAt ?? this.scanned;
    // The outbox as kept from the feed: one behind the store (another dispatcher's claim not yet
    // handed over) only makes the claim fail its expected revision, and the message is then
    // reconciled from a fresh read.
    const outbox = (this.outboxes.get(taskId) ?? (await this.outboxes.load(taskId))).outbox;
    const message = outbox.messages.find((m) => m.id === messageId);
    if (!message) {
      this.pending.delete(messageId);
      return;
    }
    const delivery = deliveryStateOf({ id: messageId, type: message.payload.type }, outbox.deliveryEvents);
    const sender = this.stopped ? undefined : this.sender;
    const claim = sender && this.decideClaim(delivery);
    // Another dispatcher may have attempted or claimed it meanwhile: the store says what is due.
    if (!sender || !claim) return this.pending.reconcile(taskId, outbox, found);
    const body = JSON.stringify(redactedPayload(this.secrets, taskId, outbox, message.payload));
    // The embedded mode: only this process can open DATA_DIR's store (SQLite
    // locking_mode=EXCLUSIVE), and it runs one dispatcher, so there is no other dispatcher for the
    // claim to win against, nor a lease for one to respect. The claim is recorded in the same
    // append as the outcome, after the send: the audit trail is the same claim + outcome pair,
    // with one append instead of two, and none of them in a burst's way (BENCHMARKS.md
    // "Webhooks"). At least once still holds: a crash before that append leaves the message due
    // at once, sent again with the same webhook-id.
    if (!this.soleDispatcher) {
      const claimed = await this.appendClaim(taskId, outbox, claim);
      if (claimed === undefined) return this.pending.reconcile(taskId, (await this.outboxes.load(taskId)).outbox, found);
      this.outboxes.applyOwn(taskId, claimed);
    }
    const sent = await sender.send({ id: messageId, url: new URL(message.url), body });
    const attempting = claim.reduce(evolveKnownDelivery, delivery);
    const endedAt = new Date().toISOString();
    const record: RecordAttempt = {
      type: 'RecordAttempt',
      data: { messageId, outcome: sent, endedAt, retry: this.config, jitter: Math.random() },
    };
    const outcome = decideDelivery(record, attempting);
    const after = outcome.reduce(evolveKnownDelivery, attempting);
    this.metrics?.webhookDeliveries.inc({ outcome: METRIC_OUTCOME[after.status] });
    // Recorded whatever happened since the claim: the attempt was made, and the audit trail shows
    // every one. At whatever revision the stream then has ('any'), so that a redelivery request of
    // another message appended meanwhile cannot fail it.
    const recorded = await this.store.appendToStream(
      webhookStreamId(taskId),
      toNewWebhookEvents(this.soleDispatcher ? [...claim, ...outcome] : outcome),
      'any',
    );
    this.outboxes.applyOwn(taskId, recorded.events);
    this.pending.reconcile(taskId, (this.outboxes.get(taskId) ?? (await this.outboxes.load(taskId))).outbox, found);
    if (after.status === 'failed') {
      this.logger.warn(
        `webhook ${messageId} of task ${taskId} failed after ${after.lastAttempt} attempts (WEBHOOK_MAX_ATTEMPTS): ${sent.attempt.error}`,
      );
    }
  }

  /** The claim of the delivery's next attempt, beginning now; undefined when it is not due (delivered, failed, or not yet). */
  private decideClaim(delivery: KnownDeliveryState): WebhookDeliveryEvent[] | undefined {
    const at = new Date().toISOString();
    try {
      return decideDelivery({ type: 'StartAttempt', data: { messageId: delivery.messageId, at, leaseMs: this.leaseMs } }, delivery);
    } catch (error) {
      if (error instanceof WebhookDeliveryEndedError || error instanceof WebhookAttemptNotDueError) return undefined;
      throw error;
    }
  }

  /** Appends the claim at the revision `outbox` was read at: its events, or undefined when another dispatcher appended first. */
  private async appendClaim(
    taskId: string,
    outbox: WebhookOutbox,
    claim: readonly WebhookDeliveryEvent[],
  ): Promise<readonly StoredEvent[] | undefined> {
    try {
      const appended = await this.store.appendToStream(
        webhookStreamId(taskId),
        toNewWebhookEvents(claim),
        expectedDeliveryRevision(outbox),
      );
      return appended.events;
    } catch (error) {
      if (error instanceof ExpectedRevisionConflictError) return undefined;
      throw error;
    }
  }
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
