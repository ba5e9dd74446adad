// CANON_LIST_CACHE=off (src/store/list-cache.ts bypassed by both stores): every page read from the database, the same bytes as with the cache, and a write seen at once either way.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ListCache } from '../../../src/store/list-cache.js';
import { MODES, createProduct, startServer, type TestServer } from '../../support/harness.js';

/** Counts the stores' calls into the list cache while `fn` runs (the one entry both stores use for a page). */
async function throughCalls(fn: () => Promise<void>): Promise<number> {
  const original = Object.getOwnPropertyDescriptor(ListCache.prototype, 'through')!;
  let calls = 0;
  const through = original.value as (...args: unknown[]) => unknown;
  Object.defineProperty(ListCache.prototype, 'through', {
    ...original,
    value: function (this: ListCache, ...args: unknown[]) {
      calls++;
      return through.apply(this, args);
    },
  });
  try {
    await fn();
  } finally {
    Object.defineProperty(ListCache.prototype, 'through', original);
  }
  return calls;
}

const PAGES = ['/v2/products?limit=2', '/v2/products?limit=2&offset=1', '/v2/products?status=active&sort=-price.amount&limit=3'];

for (const mode of MODES) {
  describe(`CANON_LIST_CACHE (${mode})`, () => {
    let cached: TestServer;
    let uncached: TestServer;
    before(async () => {
      cached = await startServer(mode, { worker: 'off' });
      uncached = await startServer(mode, { worker: 'off', listCache: false });
      for (const server of [cached, uncached])
        for (const [i, name] of ['Awl', 'Burr', 'Caliper', 'Dowel'].entries()) await createProduct(server, { name, price: { amount: 100 * (i + 1), currency: 'EUR' } });
    });
    after(async () => {
      await cached.close();
      await uncached.close();
    });

    /** Each page three times, its answers' data and totals. */
    async function pages(server: TestServer): Promise<unknown[]> {
      const out: unknown[] = [];
      for (const url of PAGES) {
        for (let i = 0; i < 3; i++) {
          const res = await server.request('GET', url);
          assert.equal(res.status, 200, res.text);
          out.push({ names: res.body.data.map((p: { name: string }) => p.name), total: res.body.pagination.total ?? null });
        }
      }
      return out;
    }

    it('off: no page goes through the cache, and every answer is what the cached server answers', async () => {
      let withCache: unknown[] = [];
      let without: unknown[] = [];
      assert.ok((await throughCalls(async () => void (withCache = await pages(cached)))) > 0, 'the default server reads pages through its cache');
      assert.equal(await throughCalls(async () => void (without = await pages(uncached))), 0);
      assert.deepEqual(without, withCache);
    });

    it('off: a write is seen by the next page, as with the cache', async () => {
      for (const server of [cached, uncached]) {
        await pages(server);
        await createProduct(server, { name: 'Anchor', price: { amount: 50, currency: 'EUR' } });
        const res = await server.request('GET', '/v2/products?limit=10&sort=name');
        assert.equal(res.body.data[0].name, 'Anchor');
      }
    });
  });
}
