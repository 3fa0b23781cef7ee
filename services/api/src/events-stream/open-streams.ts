import { Injectable } from '@nestjs/common';

/** What a stream does when the instance shuts down: tell its client to reconnect, then end. */
export interface EndableStream {
  endForShutdown(): void;
}

/**
 * The SSE streams open on this instance. A stream never ends by itself while its turn runs, so
 * the HTTP server could not close around it: on shutdown each is ended with a comment telling
 * its client to reconnect (with Last-Event-ID, to another instance), and none is lost.
 */
@Injectable()
export class OpenStreams {
  private readonly streams = new Set<EndableStream>();
  private closing = false;

  /** Adds a stream; returns what removes it. A stream opened while closing is ended at once. */
  add(stream: EndableStream): () => void {
    if (this.closing) {
      stream.endForShutdown();
      return () => undefined;
    }
    this.streams.add(stream);
    return () => this.streams.delete(stream);
  }

  get size(): number {
    return this.streams.size;
  }

  endAll(): void {
    this.closing = true;
    for (const stream of [...this.streams]) stream.endForShutdown();
    this.streams.clear();
  }
}
