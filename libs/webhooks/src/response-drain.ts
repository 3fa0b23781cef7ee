import type { Readable } from 'node:stream';

/**
 * Reads and discards a response body of at most `maxBytes`, so that its connection can serve the
 * next request; a longer body (or one that breaks off) is destroyed instead, which drops the
 * connection rather than reading on. Never throws: what the receiver sends back changes nothing.
 */
export async function drainBounded(body: Readable, maxBytes: number): Promise<void> {
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) break;
    }
  } catch {
    // A body that breaks off or times out still leaves the status the receiver answered with.
  } finally {
    if (!body.readableEnded) body.destroy();
  }
}
