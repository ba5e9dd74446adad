// Issue 13.3: contention on PostgreSQL never reaches a client as a 5xx, and totals stay exact (keyed creates at concurrency 10, concurrent item adds to one order).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createProduct, startServer, type Response, type TestServer } from '../support/harness.js';
import { PG_SKIP } from '../support/pg.js';

/** Runs `count` tasks, at most `concurrency` at a time; every task is one request (bounded in count). */
async function pooled<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

function statuses(responses: Response[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of responses) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

describe('contention on PostgreSQL gives no 5xx and exact totals', { skip: PG_SKIP }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('listen/postgres');
  });
  after(async () => server?.close());

  it('300 keyed creates at concurrency 10: 300 × 201, 300 products', async () => {
    const run = randomUUID().slice(0, 8);
    const count = async (): Promise<number> => (await server.request('GET', '/v2/products?offset=0&limit=1')).body.pagination.total as number;
    const before = await count();
    const responses = await pooled(300, 10, (i) =>
      server.request('POST', '/v2/products', {
        headers: { 'idempotency-key': `${run}-${i}` },
        body: { name: `Keyed ${run} ${i}`, price: { amount: 100 + i, currency: 'EUR' }, tags: [run] },
      }),
    );
    assert.deepEqual(
      statuses(responses),
      { 201: 300 },
      responses
        .filter((r) => r.status !== 201)
        .map((r) => r.text)
        .slice(0, 3)
        .join('\n'),
    );
    assert.equal(await count(), before + 300);
    assert.equal(new Set(responses.map((r) => r.body.id)).size, 300);
    // Each key replays its own product.
    const replays = await pooled(30, 10, (i) =>
      server.request('POST', '/v2/products', {
        headers: { 'idempotency-key': `${run}-${i}` },
        body: { name: `Keyed ${run} ${i}`, price: { amount: 100 + i, currency: 'EUR' }, tags: [run] },
      }),
    );
    replays.forEach((r, i) => assert.equal(r.body.id, responses[i]!.body.id));
  });

  for (const adds of [40, 200]) {
    it(`${adds} concurrent item adds to one order: ${adds} × 201 and a total that is their exact sum`, async () => {
      const products = await Promise.all([1999, 2999, 4999].map((amount) => createProduct(server, { price: { amount, currency: 'EUR' }, status: 'active' })));
      const order = await server.request('POST', '/v2/orders', { body: {} });
      assert.equal(order.status, 201, order.text);
      const orderId = order.body.id as string;
      const responses = await pooled(adds, adds, (i) =>
        server.request('POST', `/v2/orders/${orderId}/order-items`, { body: { product_id: products[i % 3]!.id, quantity: 1 + (i % 4) } }),
      );
      assert.deepEqual(
        statuses(responses),
        { 201: adds },
        responses
          .filter((r) => r.status !== 201)
          .map((r) => r.text)
          .slice(0, 3)
          .join('\n'),
      );
      let expected = 0;
      for (let i = 0; i < adds; i++) expected += [1999, 2999, 4999][i % 3]! * (1 + (i % 4));
      const final = await server.request('GET', `/v2/orders/${orderId}`);
      assert.equal(final.body.total.amount, expected);
      const items = await server.request('GET', `/v2/orders/${orderId}/order-items?offset=0&limit=1`);
      assert.equal(items.body.pagination.total, adds);
    });
  }

  it('item adds racing a payment: every item is either in the paid total or refused with 409, never lost', async () => {
    const product = await createProduct(server, { price: { amount: 1000, currency: 'EUR' }, status: 'active' });
    const orderId = (await server.request('POST', '/v2/orders', { body: {} })).body.id as string;
    const adds = pooled(60, 20, () => server.request('POST', `/v2/orders/${orderId}/order-items`, { body: { product_id: product.id, quantity: 1 } }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const paid = await server.request('PATCH', `/v2/orders/${orderId}`, { body: { status: 'paid' } });
    assert.equal(paid.status, 200, paid.text);
    const responses = await adds;
    const s = statuses(responses);
    assert.equal((s[201] ?? 0) + (s[409] ?? 0), 60, JSON.stringify(s));
    const final = await server.request('GET', `/v2/orders/${orderId}`);
    assert.equal(final.body.status, 'paid');
    assert.equal(final.body.total.amount, 1000 * (s[201] ?? 0));
  });
});
