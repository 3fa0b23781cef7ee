import type { MessageBus } from '../bus.port';
import { BusTimeoutError, NoHandlerError, RemoteError } from '../bus.port';

/** Every bus adapter's spec calls this with its own factory. */
export function describeBusContract(name: string, factory: () => Promise<{ bus: MessageBus; cleanup(): Promise<void> }>): void {
  describe(`MessageBus contract: ${name}`, () => {
    let bus: MessageBus;
    let cleanup: () => Promise<void>;
    let n = 0;
    const subject = () => `test.${process.pid}.${Date.now()}.${n++}`;

    beforeEach(async () => ({ bus, cleanup } = await factory()));
    afterEach(async () => cleanup?.());

    it('answers a request with the handler reply', async () => {
      const s = subject();
      bus.handle<{ a: number }, { b: number }>(s, async ({ a }) => ({ b: a * 2 }));
      await expect(bus.request(s, { a: 21 })).resolves.toEqual({ b: 42 });
    });

    it('carries a handler failure back as RemoteError with its code', async () => {
      const s = subject();
      bus.handle(s, async () => {
        throw Object.assign(new Error('boom'), { code: 'TOOL.FAILED' });
      });
      await expect(bus.request(s, {})).rejects.toMatchObject({ name: RemoteError.name, remoteCode: 'TOOL.FAILED', message: 'boom' });
    });

    it('times out when the handler does not answer in time', async () => {
      const s = subject();
      bus.handle(s, () => new Promise(() => undefined));
      await expect(bus.request(s, {}, { timeoutMs: 50 })).rejects.toBeInstanceOf(BusTimeoutError);
    });

    it('fails fast when nobody handles the subject', async () => {
      await expect(bus.request(subject(), {}, { timeoutMs: 2000 })).rejects.toBeInstanceOf(NoHandlerError);
    });

    it('shares requests between handlers of one subject, each answered once', async () => {
      const s = subject();
      const seen: string[] = [];
      bus.handle(s, async () => (seen.push('a'), 'a'));
      bus.handle(s, async () => (seen.push('b'), 'b'));
      const replies = await Promise.all(Array.from({ length: 10 }, () => bus.request<object, string>(s, {})));
      expect(replies).toHaveLength(10);
      expect(seen).toHaveLength(10);
      expect(new Set(seen).size).toBe(2);
    });

    it('delivers a published fact to every subscriber and stops after unsubscribe', async () => {
      const s = subject();
      const a: unknown[] = [];
      const b: unknown[] = [];
      bus.subscribe(s, (p) => a.push(p));
      const stopB = bus.subscribe(s, (p) => b.push(p));
      bus.publish(s, { n: 1 });
      await waitFor(() => a.length === 1 && b.length === 1);
      stopB();
      bus.publish(s, { n: 2 });
      await waitFor(() => a.length === 2);
      expect(a).toEqual([{ n: 1 }, { n: 2 }]);
      expect(b).toEqual([{ n: 1 }]);
    });
  });
}

async function waitFor(done: () => boolean, timeoutMs = 2000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
