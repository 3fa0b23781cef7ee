import type { AllStreamRecordedEvent, AllStreamResolvedEvent, AllStreamSubscription, ReadPosition } from '@eventstore/db-client';
import type { StoredEvent, Unsubscribe } from '../event-store.port';
import { BatchAssembler } from './batch-assembler';
import type { DecodedEvent } from './esdb-event-mapping';

type Listener = (events: readonly StoredEvent[]) => void;

interface Entry {
  readonly listener: Listener;
  /** Batches ending at or before this position were committed before the listener subscribed. */
  readonly after: number;
}

export interface EsdbAppendedFeedOptions {
  /** Opens a $all subscription to our streams, delivering events strictly after `from`. */
  readonly subscribe: (from: ReadPosition) => AllStreamSubscription;
  /** Decodes one of our events; undefined for an event that is not ours. May throw. */
  readonly decode: (event: AllStreamRecordedEvent) => DecodedEvent | undefined;
  readonly reportError: (error: unknown) => void;
  /** The subscription starts after this ESDB position, which stands for global position `committed`. */
  readonly startAfter: ReadPosition;
  readonly committed: number;
  readonly retry?: { readonly initialMs: number; readonly maxMs: number };
}

const DEFAULT_RETRY = { initialMs: 100, maxMs: 10_000 };

/**
 * onAppended for EventStoreDB: one catch-up subscription to $all, filtered on the server to our
 * stream prefix, shared by every listener of the store. It sees every process's appends in $all
 * order, regroups them into their appends, and after a drop resubscribes from the end of the last
 * whole append with exponential backoff, so nothing is lost or delivered twice across a reconnect.
 */
export class EsdbAppendedFeed {
  private readonly listeners = new Set<Entry>();
  private readonly assembler = new BatchAssembler();
  private readonly retry: { readonly initialMs: number; readonly maxMs: number };
  private resumeAfter: ReadPosition;
  private committed: number;
  private subscription?: AllStreamSubscription;
  private failures = 0;
  private retryTimer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly options: EsdbAppendedFeedOptions) {
    this.resumeAfter = options.startAfter;
    this.committed = options.committed;
    this.retry = options.retry ?? DEFAULT_RETRY;
  }

  start(): void {
    this.open();
  }

  subscribe(listener: Listener): Unsubscribe {
    // A catch-up subscription may still be delivering batches committed before this call; those
    // this process knows were committed already are not "appended after subscribing".
    const entry: Entry = { listener, after: this.committed };
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
  }

  /** Events up to `position` are committed (an append of this process returned). */
  noteCommitted(position: number): void {
    this.committed = Math.max(this.committed, position);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.listeners.clear();
    this.assembler.reset();
    const subscription = this.subscription;
    this.subscription = undefined;
    if (subscription) await discard(subscription);
  }

  private open(): void {
    if (this.stopped) return;
    let subscription: AllStreamSubscription;
    try {
      subscription = this.options.subscribe(this.resumeAfter);
    } catch (error) {
      this.scheduleReopen(error);
      return;
    }
    this.subscription = subscription;
    const isCurrent = () => this.subscription === subscription;
    subscription.on('confirmation', () => {
      if (isCurrent()) this.failures = 0;
    });
    subscription.on('data', (resolved: AllStreamResolvedEvent) => {
      if (isCurrent()) this.receive(resolved);
    });
    subscription.on('error', (error: Error) => this.drop(subscription, error));
    subscription.on('end', () => this.drop(subscription, new Error('EventStoreDB ended the $all subscription')));
    subscription.on('close', () => this.drop(subscription, new Error('the $all subscription closed')));
  }

  private receive(resolved: AllStreamResolvedEvent): void {
    const recorded = resolved.event;
    if (!recorded) return;
    this.failures = 0;
    try {
      const decoded = this.options.decode(recorded);
      if (decoded) for (const batch of this.assembler.push(decoded.stored, decoded.batch)) this.emit(batch);
    } catch (error) {
      // An unreadable event is reported and skipped: retrying cannot make it readable.
      this.options.reportError(error);
    }
    if (this.assembler.idle) this.resumeAfter = recorded.position;
  }

  private emit(batch: readonly StoredEvent[]): void {
    const last = batch[batch.length - 1].globalPosition;
    this.noteCommitted(last);
    for (const entry of [...this.listeners]) {
      if (!this.listeners.has(entry) || last <= entry.after) continue;
      try {
        entry.listener(batch);
      } catch (error) {
        // One failing listener must not stop the others or the subscription.
        this.options.reportError(error);
      }
    }
  }

  private drop(subscription: AllStreamSubscription, error: Error): void {
    if (this.subscription !== subscription) return;
    this.subscription = undefined;
    // The half-received append is read again, whole, from resumeAfter.
    this.assembler.reset();
    void discard(subscription);
    this.scheduleReopen(error);
  }

  private scheduleReopen(error: unknown): void {
    if (this.stopped) return;
    const delay = Math.min(this.retry.maxMs, this.retry.initialMs * 2 ** this.failures);
    this.failures += 1;
    this.options.reportError(new Error(`EventStoreDB $all subscription failed; resubscribing in ${delay} ms`, { cause: error }));
    this.retryTimer = setTimeout(() => this.open(), delay);
    this.retryTimer.unref();
  }
}

async function discard(subscription: AllStreamSubscription): Promise<void> {
  try {
    await subscription.unsubscribe();
  } catch {
    // Already failed or cancelled: nothing left to release.
  }
  subscription.destroy();
}
