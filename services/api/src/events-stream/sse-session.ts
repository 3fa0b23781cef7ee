import { Logger } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { EventStore, StoredEvent } from '@app/event-store';
import { DONE_KIND } from '@app/task-domain';
import type { EndableStream, OpenStreams } from './open-streams';
import { streamEventOf } from './stream-event';
import type { TaskEventFeed } from './task-event-feed';

export interface SseSessionOptions {
  readonly streamId: string;
  /** Send events with a revision greater than this. */
  readonly after: number;
  /** End after the `done` of this turn (or a later one); undefined: send what exists and end. */
  readonly untilTurn?: number;
  readonly keepAliveMs: number;
}

const REPLAY_PAGE = 1000;

/**
 * The last thing a stream sends when its instance shuts down: a comment (no event) saying why it
 * ends, and how soon to come back. The client resumes with the id of the last event it got.
 */
export const SHUTDOWN_FRAME = ': shutting down, reconnect with Last-Event-ID\nretry: 1000\n\n';
const logger = new Logger('SseSession');

/** The headers of every stream, and of the answer to a HEAD of one. */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

interface Frame {
  readonly kind: string;
  readonly turn: unknown;
  readonly block: string;
}

/**
 * The feed hands the same event object to every open stream of the task, so each event is
 * mapped and serialised once, not once per subscriber.
 */
const frames = new WeakMap<StoredEvent, Frame>();

function frameOf(stored: StoredEvent): Frame {
  const cached = frames.get(stored);
  if (cached) return cached;
  const { kind, data } = streamEventOf(stored);
  const frame = {
    kind,
    turn: data.turn,
    block: `event: ${kind}\ndata: ${JSON.stringify({ type: kind, data })}\nid: ${stored.revision}\n\n`,
  };
  frames.set(stored, frame);
  return frame;
}

/**
 * One SSE connection. Live events are buffered from the moment the session starts, before the
 * replay is read, and every event is sent only if its revision is exactly the next one: an event
 * is never missed at the replay→live seam (a gap triggers a re-read from the store) and never
 * sent twice (anything at or below the last sent revision is dropped).
 *
 * An event that cannot be read (toTaskEvent), or a failed read of the store, ends the stream
 * just before it and is logged: the client has every event up to there, and resuming from its
 * last id meets the same event again rather than skipping it.
 */
export class SseSession implements EndableStream {
  private lastSent: number;
  private buffer: StoredEvent[] = [];
  private pumping = false;
  private closed = false;
  private readonly unsubscribe: () => void;
  private forget: () => void = () => undefined;
  private readonly keepAlive: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    private readonly store: EventStore,
    feed: TaskEventFeed,
    openStreams: OpenStreams,
    private readonly options: SseSessionOptions,
  ) {
    this.lastSent = options.after;
    this.unsubscribe = feed.subscribe(options.streamId, (events) => {
      this.buffer.push(...events);
      this.schedule();
    });
    this.keepAlive = setInterval(() => this.write(': keep-alive\n\n'), options.keepAliveMs);
    res.on('close', () => this.close());
    this.forget = openStreams.add(this);
  }

  async start(): Promise<void> {
    if (this.closed) return; // opened as the instance began to shut down
    this.res.writeHead(200, SSE_HEADERS);
    this.write(': stream open\n\n');
    this.pumping = true;
    try {
      const ended = await this.catchUpFromStore();
      if (!ended && this.options.untilTurn === undefined) this.end();
    } catch (error) {
      return this.fail(error);
    } finally {
      this.pumping = false;
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.pumping || this.closed) return;
    this.pumping = true;
    this.pump()
      .catch((error: unknown) => this.fail(error))
      .finally(() => {
        this.pumping = false;
        if (this.buffer.length > 0 && !this.closed) this.schedule();
      });
  }

  private async pump(): Promise<void> {
    while (this.buffer.length > 0 && !this.closed) {
      const batch = this.buffer;
      this.buffer = [];
      for (const event of batch) {
        if (event.revision <= this.lastSent) continue;
        if (event.revision > this.lastSent + 1) {
          await this.catchUpFromStore();
          break;
        }
        if (await this.send(event)) return;
      }
    }
  }

  /** Sends every stored event after lastSent; true when the stream ended on a `done`. */
  private async catchUpFromStore(): Promise<boolean> {
    for (;;) {
      const events = await this.store.readStream(this.options.streamId, { fromRevision: this.lastSent + 1, maxCount: REPLAY_PAGE });
      for (const event of events) if (await this.send(event)) return true;
      if (events.length < REPLAY_PAGE || this.closed) return this.closed;
    }
  }

  /** Writes one event; true when it was the final `done`. */
  private async send(stored: StoredEvent): Promise<boolean> {
    if (this.closed) return true;
    const { kind, turn, block } = frameOf(stored);
    this.lastSent = stored.revision;
    if (!this.res.write(block)) await this.drained();
    const until = this.options.untilTurn;
    if (kind === DONE_KIND && until !== undefined && (turn as number) >= until) {
      this.end();
      return true;
    }
    return false;
  }

  /** Waits for the socket to drain or close, leaving no listener behind either way. */
  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  private write(text: string): void {
    if (!this.closed) this.res.write(text);
  }

  /**
   * Ends the stream between two events (each is one write, so the client never holds half of
   * one) with SHUTDOWN_FRAME, and closes the connection: kept alive, it would hold the server's
   * close up, and a client reusing it would meet an instance that takes no more requests.
   */
  endForShutdown(): void {
    if (this.closed) return;
    if (!this.res.headersSent) this.res.writeHead(200, SSE_HEADERS);
    this.res.write(SHUTDOWN_FRAME);
    this.res.end(() => this.res.socket?.end());
    this.close();
  }

  private fail(error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    if (!this.closed) logger.error(`stream ${this.options.streamId} ended after event ${this.lastSent}: ${reason}`);
    this.end();
  }

  private end(): void {
    if (this.closed) return;
    this.res.end();
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAlive);
    this.unsubscribe();
    this.forget();
  }
}
