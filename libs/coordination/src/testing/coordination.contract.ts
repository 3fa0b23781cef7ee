import { randomBytes } from 'node:crypto';
import type { CoordinationStore, CoordinationStoreOptions } from '../coordination.port';

/** Every coordination store adapter's spec calls this with its own factory. */
export function describeCoordinationStoreContract(
  name: string,
  make: (options: CoordinationStoreOptions) => Promise<CoordinationStore>,
): void {
  describe(`CoordinationStore contract: ${name}`, () => {
    let store: CoordinationStore;
    const bucket = `contract-${randomBytes(4).toString('hex')}`;
    beforeAll(async () => (store = await make({ bucket })));
    afterAll(async () => store.close());
    const key = () => `k.${randomBytes(6).toString('hex')}`;

    it('creates a key once: a second create finds it taken', async () => {
      const k = key();
      const revision = await store.create(k, 'first');
      expect(revision).toEqual(expect.any(Number));
      expect(await store.create(k, 'second')).toBeUndefined();
      expect(await store.get(k)).toEqual({ value: 'first', revision });
    });

    it('answers undefined for a key never written', async () => {
      expect(await store.get(key())).toBeUndefined();
    });

    it('updates only from the current revision, and every write moves the revision on', async () => {
      const k = key();
      const first = (await store.create(k, 'a')) as number;
      const second = await store.update(k, 'b', first);
      expect(second).toBeGreaterThan(first);
      expect(await store.update(k, 'c', first)).toBeUndefined();
      expect(await store.get(k)).toEqual({ value: 'b', revision: second });
    });

    it('deletes only at the current revision; a deleted key can be created again', async () => {
      const k = key();
      const first = (await store.create(k, 'a')) as number;
      const second = (await store.update(k, 'b', first)) as number;
      expect(await store.delete(k, first)).toBe(false);
      expect(await store.delete(k, second)).toBe(true);
      expect(await store.get(k)).toBeUndefined();
      expect(await store.update(k, 'x', second)).toBeUndefined();
      expect(await store.create(k, 'again')).toEqual(expect.any(Number));
      expect((await store.get(k))?.value).toBe('again');
    });

    it('lets exactly one of many concurrent compare-and-set writers win each round: 40 increments count 40', async () => {
      const k = key();
      await store.create(k, '0');
      const increment = async () => {
        for (;;) {
          const current = (await store.get(k)) as { value: string; revision: number };
          if ((await store.update(k, String(Number(current.value) + 1), current.revision)) !== undefined) return;
        }
      };
      await Promise.all(Array.from({ length: 40 }, increment));
      expect((await store.get(k))?.value).toBe('40');
    }, 30_000);

    it("forgets a key not written for the bucket's TTL", async () => {
      const short = await make({ bucket: `${bucket}-ttl`, ttlMs: 1_000 });
      try {
        const k = key();
        await short.create(k, 'soon gone');
        expect((await short.get(k))?.value).toBe('soon gone');
        await new Promise((r) => setTimeout(r, 2_500));
        expect(await short.get(k)).toBeUndefined();
        expect(await short.create(k, 'fresh')).toEqual(expect.any(Number));
      } finally {
        await short.close();
      }
    }, 20_000);

    it('refuses keys outside the allowed alphabet', async () => {
      await expect(store.get('a b')).rejects.toThrow(/invalid coordination key/);
      await expect(store.create('../x', 'v')).rejects.toThrow(/invalid coordination key/);
    });
  });
}
