/** One dispatched Server-Sent Events message: its fields as the event-stream format defines them. */
export interface SseMessage {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
}

/**
 * An incremental parser of the text/event-stream format (the WHATWG HTML "event stream
 * interpretation"): feed it decoded text as it arrives, in chunks cut anywhere, and it returns the
 * messages each blank line completes. Comments (`: keep-alive`) and field-less blocks dispatch
 * nothing; a block cut off by a dropped connection is never returned.
 */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private id: string | undefined;

  feed(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const messages: SseMessage[] = [];
    for (;;) {
      const end = this.lineEnd();
      if (end === undefined) break;
      const line = this.buffer.slice(0, end.at);
      this.buffer = this.buffer.slice(end.at + end.length);
      const message = this.line(line);
      if (message) messages.push(message);
    }
    return messages;
  }

  /** The first complete line's end; a lone CR at the buffer's end may be half of a CRLF, so it waits. */
  private lineEnd(): { at: number; length: number } | undefined {
    const at = this.buffer.search(/[\r\n]/);
    if (at < 0) return undefined;
    if (this.buffer[at] === '\n') return { at, length: 1 };
    if (at + 1 === this.buffer.length) return undefined;
    return { at, length: this.buffer[at + 1] === '\n' ? 2 : 1 };
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const message = this.data.length > 0 ? { event: this.event || 'message', data: this.data.join('\n'), id: this.id } : undefined;
    this.event = '';
    this.data = [];
    return message;
  }
}
