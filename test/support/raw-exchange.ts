import { connect } from 'node:net';

/** What a raw socket got back: the response text, and whether the server ended the connection. */
export interface RawExchange {
  readonly response: string;
  readonly status: number;
  readonly headers: Record<string, string>;
  /** The body, parsed when it is JSON. */
  readonly body: any;
  /** The body's bytes as sent. */
  readonly bytes: Buffer;
  readonly endedByServer: boolean;
}

/** A pause between two chunks: a client sending slowly. */
export interface Pause {
  readonly pauseMs: number;
}

/**
 * Writes `chunks` to a fresh TCP connection exactly as given (no fetch to tidy a hostile request
 * up), pausing where a Pause says so. Settles when the server ends the connection, or, unless `waitForClose`, as soon as one
 * whole response has arrived; in any case after `waitMs`.
 */
export function rawExchange(
  url: string,
  chunks: readonly (string | Buffer | Pause)[],
  { waitMs = 1_000, waitForClose = true } = {},
): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let response = '';
    let endedByServer = false;
    const parse = () => {
      const split = response.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = response.slice(0, split === -1 ? undefined : split).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const text = split === -1 ? '' : response.slice(split + 4);
      return {
        status: Number(statusLine.split(' ')[1]),
        headers,
        text,
        whole: split !== -1 && Buffer.byteLength(text) >= Number(headers['content-length']),
      };
    };
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const { status, headers, text } = parse();
      const bytes = Buffer.from(text, 'latin1');
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      resolve({ response, status, headers, body, bytes, endedByServer });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (d) => {
      response += d.toString('latin1');
      if (!waitForClose && parse().whole) finish();
    });
    socket.on('end', () => {
      endedByServer = true;
      finish();
    });
    // A reset after the response still means the server closed it.
    socket.on('error', () => {
      endedByServer = true;
      finish();
    });
    void (async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return;
        if (typeof chunk === 'object' && 'pauseMs' in chunk) await new Promise((r) => setTimeout(r, chunk.pauseMs));
        else socket.write(chunk);
      }
    })();
  });
}
