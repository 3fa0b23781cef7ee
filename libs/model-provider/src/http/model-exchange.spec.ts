import { ModelExchange } from './model-exchange';

// The read-ahead bound of a streamed answer, which a real server on loopback cannot be made to
// hit on purpose (the reader is faster than the socket): driven here through undici's handler
// calls, in the order undici makes them.

describe('ModelExchange', () => {
  it('pauses the socket once 64 chunks wait unread, and resumes it when the reader has caught up', async () => {
    const exchange = new ModelExchange();
    let resumed = 0;
    exchange.onConnect(() => undefined);
    exchange.onHeaders(200, [Buffer.from('content-type'), Buffer.from('text/event-stream')], () => resumed++);
    const reader = exchange.chunks();
    const read: string[] = [];
    exchange.onData(Buffer.from('chunk 0;'));
    read.push(String((await reader.next()).value)); // read chunk by chunk from here on

    const accepted = Array.from({ length: 69 }, (_, i) => exchange.onData(Buffer.from(`chunk ${i + 1};`)));

    expect(accepted.slice(0, 63).every(Boolean)).toBe(true);
    expect(accepted.slice(63).some(Boolean)).toBe(false);
    for (let i = 0; i < 36; i++) read.push(String((await reader.next()).value));
    expect(resumed).toBe(0);
    read.push(String((await reader.next()).value)); // 32 left unread: half the read-ahead
    expect(resumed).toBe(1);
    exchange.onComplete();
    for await (const chunk of reader) read.push(String(chunk));
    expect(read).toEqual(Array.from({ length: 70 }, (_, i) => `chunk ${i};`));
  });

  it('never pauses an answer read whole, however many chunks it comes in', async () => {
    const exchange = new ModelExchange();
    exchange.onConnect(() => undefined);
    exchange.onHeaders(200, [], () => undefined);
    const text = exchange.text();

    const accepted = Array.from({ length: 200 }, () => exchange.onData(Buffer.from('ab')));
    exchange.onComplete();

    expect(accepted.every(Boolean)).toBe(true);
    expect(await text).toBe('ab'.repeat(200));
  });

  it('aborts a request undici still had queued as soon as it starts it', async () => {
    const exchange = new ModelExchange();
    exchange.abort(new Error('deadline'));
    const aborts: Error[] = [];

    exchange.onConnect((reason) => aborts.push(reason));

    expect(aborts.map((e) => e.message)).toEqual(['deadline']);
    await expect(exchange.head).rejects.toThrow('deadline');
  });

  it('leaves a completed exchange alone when aborted after it', async () => {
    const exchange = new ModelExchange();
    const aborts: Error[] = [];
    exchange.onConnect((reason) => aborts.push(reason));
    exchange.onHeaders(200, [], () => undefined);
    exchange.onData(Buffer.from('{}'));
    exchange.onComplete();

    exchange.abort(new Error('too late'));

    expect(aborts).toEqual([]);
    expect(await exchange.text()).toBe('{}');
  });

  it('reads only the headers asked for, by lower-case name', async () => {
    const exchange = new ModelExchange();
    exchange.onConnect(() => undefined);
    exchange.onHeaders(
      429,
      ['Content-Type', 'application/json', 'Retry-After', '3', 'retry-after', '9'].map((h) => Buffer.from(h)),
      () => undefined,
    );

    const head = await exchange.head;

    expect(head.statusCode).toBe(429);
    expect(head.header('retry-after')).toBe('3');
    expect(head.header('content-type')).toBe('application/json');
    expect(head.header('x-missing')).toBeUndefined();
  });
});
