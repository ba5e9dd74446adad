// canon-client 202 operations (issue 28.6, DESIGN §9): client.orders.pay(id) → { status, location, done() }; done() polls the Location honouring Retry-After and resolves with the final state or throws a typed error.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { ADMIN_KEY, startServer, type Mode, type TestServer } from '../support/harness.js';
import { PG_URL } from '../support/pg.js';
import { faultProxy } from './proxy.js';
import type { CanonClient } from '../../packages/client/dist/index.js';
import { canon } from './support.js';

const { createClient, CanonError, OperationFailedError, OperationTimeoutError, responseOf } = canon;
const MODES: Mode[] = ['listen', ...(PG_URL ? (['listen/postgres'] as const) : [])];

for (const mode of MODES) {
  describe(`canon-client operations: the payment (${mode})`, () => {
    let server: TestServer;
    let admin: CanonClient;
    let productId: string;
    let customer: CanonClient;

    /** A pending order of the customer with one item. */
    const order = async (): Promise<string> => {
      const o = await customer.orders.create({});
      await customer.orders.items(o.id!).create({ product_id: productId, quantity: 1 });
      return o.id!;
    };

    before(async () => {
      server = await startServer(mode);
      admin = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY });
      productId = (await admin.products.create({ name: 'Payable', price: { amount: 1250, currency: 'EUR' } })).id!;
      const user = await admin.users.create({ email: `payer-${randomUUID()}@example.com`, full_name: 'Payer', password: 'long enough password' });
      const key = await admin.apiKeys.create({ name: 'payer', user_id: user.id });
      customer = createClient({ baseUrl: server.baseUrl!, apiKey: key.key! });
    });
    afterEach(() => {
      delete process.env.CANON_PAYMENT_DELAY_MS;
      delete process.env.CANON_PAYMENT_FAILURE_RATE;
    });
    after(async () => server.close());

    it('pay → 202 {status: processing} with its Location; done() resolves with the succeeded payment; the order is paid', async () => {
      process.env.CANON_PAYMENT_DELAY_MS = '300';
      const id = await order();
      const op = await customer.orders.pay(id);
      assert.equal(op.status, 'processing');
      assert.deepEqual(op.body, { status: 'processing' });
      assert.equal(op.location, `/v2/orders/${id}/payment`);
      assert.equal(responseOf(op.body)?.status, 202);
      // While it is in flight the order is held (DESIGN §9 state rule).
      await assert.rejects(customer.orders.cancel(id), { name: 'CanonError', status: 409, code: 'INVALID_STATE' });
      const started = Date.now();
      const final = await op.done({ timeout: 10_000 });
      assert.equal(final.status, 'succeeded');
      assert.ok(Date.now() - started >= 150, 'it waited for the worker');
      assert.equal((await customer.orders.get(id)).status, 'paid');
    });

    it('the same Idempotency-Key pays once: the repeat gets the stored 202, replayed', async () => {
      const id = await order();
      const key = randomUUID();
      const first = await customer.orders.pay(id, { idempotencyKey: key });
      const again = await customer.orders.pay(id, { idempotencyKey: key });
      assert.equal(responseOf(again.body)?.replayed, true);
      assert.equal(again.location, first.location);
      assert.equal((await again.done()).status, 'succeeded');
      // PostgreSQL numbers events just after their commit: wait for the first, then count.
      const paidEvents = async (): Promise<string[]> => {
        const ids: string[] = [];
        for await (const e of admin.events.list({ type: 'order.paid' })) if ((e.data.object as { id?: string }).id === id) ids.push(e.id);
        return ids;
      };
      const deadline = Date.now() + 10_000;
      while ((await paidEvents()).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal((await paidEvents()).length, 1);
    });

    it('a declined payment: done() throws OperationFailedError with the final state', async () => {
      process.env.CANON_PAYMENT_FAILURE_RATE = '1';
      const id = await order();
      const op = await customer.orders.pay(id);
      await assert.rejects(op.done({ timeout: 10_000 }), (err: unknown) => {
        assert.ok(err instanceof OperationFailedError);
        assert.equal(err.location, `/v2/orders/${id}/payment`);
        assert.deepEqual([(err.result as { status: string }).status, (err.result as { error: string }).error], ['failed', 'The card was declined.']);
        assert.match(err.message, /failed: The card was declined\./);
        return true;
      });
      assert.equal((await customer.orders.get(id)).status, 'pending', 'released, unpaid');
    });

    it('a payment slower than the timeout: OperationTimeoutError at the deadline, and a later done() still gets the outcome', async () => {
      process.env.CANON_PAYMENT_DELAY_MS = '1500';
      const id = await order();
      const op = await customer.orders.pay(id);
      const started = Date.now();
      await assert.rejects(op.done({ timeout: 300 }), (err: unknown) => {
        assert.ok(err instanceof OperationTimeoutError);
        assert.equal((err.last as { status: string }).status, 'processing');
        return true;
      });
      const took = Date.now() - started;
      assert.ok(took >= 300 && took < 1200, `gave up after ${took} ms`);
      assert.equal((await op.done({ timeout: 10_000 })).status, 'succeeded');
    });

    it('done() honours the Retry-After of a poll; one past the deadline ends the wait at once', async () => {
      process.env.CANON_PAYMENT_DELAY_MS = '50';
      const id = await order();
      let polls = 0;
      const proxy = await faultProxy(server.baseUrl!, (req) =>
        req.method === 'GET' && req.url!.endsWith('/payment') && ++polls === 1
          ? { status: 200, headers: { 'retry-after': '1' }, body: { status: 'processing', created_at: '', updated_at: '', links: [] } }
          : 'pass',
      );
      try {
        const c = createClient({ baseUrl: proxy.url, apiKey: ADMIN_KEY });
        const op = await c.orders.pay(id);
        assert.equal((await op.done({ interval: 10, timeout: 10_000 })).status, 'succeeded');
        const gets = proxy.seen.filter((s) => s.method === 'GET');
        assert.equal(gets.length, 2);
        assert.ok(gets[1]!.at - gets[0]!.at >= 990, `polled again after ${gets[1]!.at - gets[0]!.at} ms`);

        const id2 = await order();
        polls = 0;
        const op2 = await c.orders.pay(id2);
        const before = proxy.seen.length;
        const started = Date.now();
        await assert.rejects(op2.done({ interval: 10, timeout: 500 }), OperationTimeoutError);
        assert.ok(Date.now() - started < 400, 'no wait for a Retry-After past the deadline');
        assert.equal(proxy.seen.length - before, 1, 'one poll, none before the time it asked for');
      } finally {
        await proxy.close();
      }
    });

    it('pay on an order that cannot be paid is the server’s 409, thrown before any handle exists', async () => {
      const empty = await customer.orders.create({});
      await assert.rejects(customer.orders.pay(empty.id!), (err: unknown) => err instanceof CanonError && err.status === 409 && err.code === 'INVALID_STATE');
    });
  });
}
