// E2E: the asynchronous payment action (DESIGN §3, §4, §9): 202 + Location, the outcome at that path, the order paid by the embedded worker; every mode.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ADMIN_KEY, createCustomer, createProduct, MODES, startServer, type Response, type TestServer } from '../../support/harness.js';
import { allowSet, expectError, JSON_TYPE, linkOf } from '../resources/expect.js';

const PROCESSING = '{"status":"processing"}';
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv, formats: string[]) => Ajv;

/** Sets the simulated provider's knobs (read at each payment) for one test; afterEach puts them back. */
function provider(settings: { delayMs?: number; failureRate?: number }): void {
  if (settings.delayMs !== undefined) process.env.CANON_PAYMENT_DELAY_MS = String(settings.delayMs);
  if (settings.failureRate !== undefined) process.env.CANON_PAYMENT_FAILURE_RATE = String(settings.failureRate);
}

/** Asserts the 202 of an accepted payment exactly: status, Location, body, media type. */
function assertAccepted(res: Response, orderId: string): void {
  assert.equal(res.status, 202, res.text);
  assert.equal(res.headers['location'], `/v2/orders/${orderId}/payment`);
  assert.equal(res.headers['content-type'], JSON_TYPE);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.text, PROCESSING);
}

for (const mode of MODES) {
  describe(`the payment action (${mode})`, () => {
    let server: TestServer;
    let cust: { userId: string; key: string };
    let other: { userId: string; key: string };
    let productId: string;

    /** A pending order of `owner` with one item, made by the admin. */
    const orderWithItem = async (owner = cust): Promise<string> => {
      const order = await server.request('POST', '/v2/orders', { body: { user_id: owner.userId } });
      assert.equal(order.status, 201, order.text);
      const item = await server.request('POST', `/v2/orders/${order.body.id}/order-items`, { body: { product_id: productId, quantity: 2 } });
      assert.equal(item.status, 201, item.text);
      return order.body.id;
    };
    const pay = (orderId: string, key = cust.key, options: { headers?: Record<string, string>; body?: unknown } = {}) =>
      server.request('POST', `/v2/orders/${orderId}/payment`, { key, ...options });
    /** GETs the payment until it is no longer processing (5 s at most) and returns that answer. */
    const settled = async (orderId: string, key = cust.key): Promise<Response> => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const res = await server.request('GET', `/v2/orders/${orderId}/payment`, { key });
        assert.equal(res.status, 200, res.text);
        if (res.body.status !== 'processing' || Date.now() > deadline) return res;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    /** The events of one order of a type, once they are in the log (PostgreSQL numbers them just after the commit). */
    const eventsOf = async (orderId: string, type: string, expected: number): Promise<number> => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const n = (await server.runtime.store.listEvents(0, 100_000)).filter((e) => e.object_id === orderId && e.type === type).length;
        if (n >= expected || Date.now() > deadline) return n;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const operationsOf = async (orderId: string) =>
      (await server.runtime.store.list('operations', { where: [{ path: 'object_id', op: 'eq', value: orderId }], orderBy: [{ path: 'id', desc: false }], limit: 100 })).rows;

    before(async () => {
      server = await startServer(mode);
      cust = await createCustomer(server, `payer-${randomUUID()}@example.com`);
      other = await createCustomer(server, `other-${randomUUID()}@example.com`);
      productId = (await createProduct(server, { price: { amount: 1250, currency: 'EUR' } })).id;
    });
    afterEach(() => {
      delete process.env.CANON_PAYMENT_DELAY_MS;
      delete process.env.CANON_PAYMENT_FAILURE_RATE;
    });
    after(async () => server.close());

    it('202 with Location and {"status":"processing"}; the Location shows processing, then succeeded; the order is paid with one order.paid event', async () => {
      provider({ delayMs: 400 });
      const id = await orderWithItem();
      const res = await pay(id);
      assertAccepted(res, id);
      const during = await server.request('GET', res.headers['location']!, { key: cust.key });
      assert.equal(during.status, 200, during.text);
      assert.equal(during.headers['content-type'], JSON_TYPE);
      assert.equal(during.headers['cache-control'], 'private, no-cache');
      assert.equal(during.body.status, 'processing');
      assert.equal('error' in during.body, false);
      assert.equal(typeof during.body.created_at, 'string');
      assert.deepEqual(linkOf(during.body, 'up'), { rel: 'up', href: `/v2/orders/${id}`, method: 'GET' });
      assert.deepEqual(linkOf(during.body, 'self'), { rel: 'self', href: `/v2/orders/${id}/payment`, method: 'GET' });
      // Until the worker is done the order is pending, and a second payment is refused rather than charged twice.
      assert.equal((await server.request('GET', `/v2/orders/${id}`, { key: cust.key })).body.status, 'pending');
      expectError(await pay(id), 409, 'INVALID_STATE');
      const done = await settled(id);
      assert.equal(done.body.status, 'succeeded', done.text);
      assert.equal('error' in done.body, false);
      const order = await server.request('GET', `/v2/orders/${id}`, { key: cust.key });
      assert.equal(order.body.status, 'paid');
      assert.equal(linkOf(order.body, 'payment'), undefined, 'the payment link shows only while pending');
      assert.equal(await eventsOf(id, 'order.paid', 1), 1);
      // The payment's one event is order.paid (no order.updated beside it), the order's last, with what it changed.
      const last = (await server.runtime.store.listEvents(0, 100_000)).filter((e) => e.object_id === id).at(-1)!;
      assert.equal(last.type, 'order.paid');
      assert.equal((last.data as { object: { status: string } }).object.status, 'paid');
      assert.deepEqual(last.previous_attributes, { status: 'pending' });
      // A paid order cannot be paid again; its payment stays readable.
      expectError(await pay(id), 409, 'INVALID_STATE');
      assert.equal((await server.request('GET', `/v2/orders/${id}/payment`, { key: cust.key })).body.status, 'succeeded');
      const ops = await operationsOf(id);
      assert.equal(ops.length, 1);
      assert.equal(ops[0]!.attempts, 1);
    });

    it('the payment link shows to the owner and the admin while the order is pending, and not once it is cancelled', async () => {
      const id = await orderWithItem();
      const link = { rel: 'payment', href: `/v2/orders/${id}/payment`, method: 'POST' };
      assert.deepEqual(linkOf((await server.request('GET', `/v2/orders/${id}`, { key: cust.key })).body, 'payment'), link);
      assert.deepEqual(linkOf((await server.request('GET', `/v2/orders/${id}`)).body, 'payment'), link);
      assert.equal((await server.request('POST', `/v2/orders/${id}/cancel`, { key: cust.key })).status, 200);
      assert.equal(linkOf((await server.request('GET', `/v2/orders/${id}`, { key: cust.key })).body, 'payment'), undefined);
    });

    it('a declined payment (failure rate 1) is failed with its reason, the order stays pending, and a new payment can follow', async () => {
      provider({ delayMs: 0, failureRate: 1 });
      const id = await orderWithItem();
      assertAccepted(await pay(id), id);
      const failed = await settled(id);
      assert.equal(failed.body.status, 'failed', failed.text);
      assert.match(failed.body.error, /declined/);
      assert.equal((await server.request('GET', `/v2/orders/${id}`, { key: cust.key })).body.status, 'pending');
      assert.equal(await eventsOf(id, 'order.paid', 0), 0);
      provider({ failureRate: 0 });
      assertAccepted(await pay(id), id);
      // The Location shows the newest payment.
      assert.equal((await settled(id)).body.status, 'succeeded');
      assert.equal((await server.request('GET', `/v2/orders/${id}`, { key: cust.key })).body.status, 'paid');
      assert.deepEqual(
        (await operationsOf(id)).map((o) => o.status),
        ['failed', 'succeeded'],
      );
    });

    it('409 INVALID_STATE for an order without items and for an order that is not pending; 404 before any payment', async () => {
      const empty = await server.request('POST', '/v2/orders', { body: { user_id: cust.userId } });
      const e = expectError(await pay(empty.body.id), 409, 'INVALID_STATE');
      assert.match(e.message, /without items/);
      expectError(await server.request('GET', `/v2/orders/${empty.body.id}/payment`, { key: cust.key }), 404, 'NOT_FOUND');
      assert.equal((await operationsOf(empty.body.id)).length, 0);
      const cancelled = await orderWithItem();
      assert.equal((await server.request('POST', `/v2/orders/${cancelled}/cancel`, { key: cust.key })).status, 200);
      expectError(await pay(cancelled), 409, 'INVALID_STATE');
      const shipped = await orderWithItem();
      assert.equal((await server.request('PATCH', `/v2/orders/${shipped}`, { body: { status: 'paid' } })).status, 200);
      expectError(await pay(shipped), 409, 'INVALID_STATE');
    });

    it("a customer can neither pay nor read the payment of another customer's order (404); an admin pays anyone's", async () => {
      const theirs = await orderWithItem(other);
      expectError(await pay(theirs, cust.key), 404, 'NOT_FOUND');
      assert.equal((await operationsOf(theirs)).length, 0);
      assertAccepted(await pay(theirs, ADMIN_KEY), theirs);
      expectError(await server.request('GET', `/v2/orders/${theirs}/payment`, { key: cust.key }), 404, 'NOT_FOUND');
      assert.equal((await settled(theirs, other.key)).body.status, 'succeeded');
      expectError(await server.request('GET', `/v2/orders/${randomUUID()}/payment`), 404, 'NOT_FOUND');
    });

    it('the state rule: while the payment is processing, cancel, admin PATCH of status, DELETE and a second payment are 409 INVALID_STATE naming the payment, and no POST action is linked', async () => {
      provider({ delayMs: 1500 });
      const id = await orderWithItem();
      assertAccepted(await pay(id), id);
      const [op] = await operationsOf(id);
      assert.equal(op!.status, 'processing');
      const held = (res: Response): void => {
        const e = expectError(res, 409, 'INVALID_STATE');
        assert.equal(e.message, `The order's payment ${op!.id} is processing; the order cannot change until it has finished.`);
        assert.deepEqual(e.details, [{ field: 'payment', message: "is processing; GET the order's payment to follow it", value: op!.id }]);
      };
      held(await server.request('POST', `/v2/orders/${id}/cancel`, { key: cust.key }));
      held(await server.request('POST', `/v2/orders/${id}/cancel`));
      held(await pay(id));
      for (const status of ['cancelled', 'paid', 'pending']) held(await server.request('PATCH', `/v2/orders/${id}`, { body: { status } }));
      held(await server.request('DELETE', `/v2/orders/${id}`));
      // Links show the actions allowed now: neither cancel nor payment, to the owner or the admin.
      for (const key of [cust.key, undefined]) {
        const order = await server.request('GET', `/v2/orders/${id}`, key ? { key } : {});
        assert.equal(order.body.status, 'pending');
        assert.equal(linkOf(order.body, 'cancel'), undefined);
        assert.equal(linkOf(order.body, 'payment'), undefined);
      }
      // Another customer still learns nothing: 404, not the payment.
      expectError(await server.request('POST', `/v2/orders/${id}/cancel`, { key: other.key }), 404, 'NOT_FOUND');
      assert.equal((await settled(id)).body.status, 'succeeded');
      const paid = await server.request('GET', `/v2/orders/${id}`, { key: cust.key });
      assert.equal(paid.body.status, 'paid');
      assert.deepEqual(linkOf(paid.body, 'cancel'), { rel: 'cancel', href: `/v2/orders/${id}/cancel`, method: 'POST' });
      // Once the payment is recorded, the order moves on as its transitions allow: a paid order can be cancelled.
      const cancelled = await server.request('POST', `/v2/orders/${id}/cancel`, { key: cust.key });
      assert.equal(cancelled.status, 200, cancelled.text);
      assert.equal(cancelled.body.status, 'cancelled');
      assert.deepEqual(
        (await operationsOf(id)).map((o) => o.status),
        ['succeeded'],
      );
    });

    it('items cannot change while a payment is processing: the total paid is the total accepted', async () => {
      process.env.CANON_PAYMENT_DELAY_MS = '1500';
      const orderId = await orderWithItem();
      const before = (await server.request('GET', `/v2/orders/${orderId}`, { key: cust.key })).body.total;
      assert.equal((await pay(orderId)).status, 202);
      const [op] = await operationsOf(orderId);
      const held = (res: Response): void => {
        const e = expectError(res, 409, 'INVALID_STATE');
        assert.equal(e.message, `The order's payment ${op!.id} is processing; the order cannot change until it has finished.`);
      };
      held(await server.request('POST', `/v2/orders/${orderId}/order-items`, { key: cust.key, body: { product_id: productId, quantity: 5 } }));
      held(await server.request('POST', '/v2/order-items', { key: cust.key, body: { order_id: orderId, product_id: productId, quantity: 5 } }));
      const items = await server.request('GET', `/v2/orders/${orderId}/order-items`, { key: cust.key });
      const item = items.body.data[0];
      held(await server.request('PATCH', `/v2/order-items/${item.id}`, { key: cust.key, body: { quantity: 9 } }));
      held(await server.request('PUT', `/v2/order-items/${item.id}`, { body: { quantity: 9 } }));
      held(await server.request('DELETE', `/v2/order-items/${item.id}`, { key: cust.key }));
      // Another customer learns nothing of the payment: 404 for the item, as before.
      expectError(await server.request('DELETE', `/v2/order-items/${item.id}`, { key: other.key }), 404, 'NOT_FOUND');
      assert.equal((await settled(orderId)).body.status, 'succeeded');
      const order = await server.request('GET', `/v2/orders/${orderId}`, { key: cust.key });
      assert.equal(order.body.status, 'paid');
      assert.deepEqual(order.body.total, before);
    });

    it('the body is nothing or {}; anything else is 422', async () => {
      const id = await orderWithItem();
      const unknown = expectError(await pay(id, cust.key, { body: { amount: 100 } }), 422, 'VALIDATION_ERROR');
      assert.deepEqual(
        unknown.details?.map((d) => d.field),
        ['amount'],
      );
      expectError(await pay(id, cust.key, { body: [] }), 422, 'VALIDATION_ERROR');
      expectError(await pay(id, cust.key, { body: 'card=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 422, 'VALIDATION_ERROR');
      assert.equal((await operationsOf(id)).length, 0);
      assertAccepted(await pay(id, cust.key, { body: {} }), id);
    });

    it('Idempotency-Key: a repeat replays the same 202, Location and body, before and after the payment settled, with one operation', async () => {
      provider({ delayMs: 200 });
      const id = await orderWithItem();
      const key = randomUUID();
      const first = await pay(id, cust.key, { headers: { 'idempotency-key': key } });
      assertAccepted(first, id);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      const during = await pay(id, cust.key, { headers: { 'idempotency-key': key } });
      assertAccepted(during, id);
      assert.equal(during.headers['idempotent-replayed'], 'true');
      assert.equal((await settled(id)).body.status, 'succeeded');
      const afterwards = await pay(id, cust.key, { headers: { 'idempotency-key': key } });
      assertAccepted(afterwards, id);
      assert.equal(afterwards.headers['idempotent-replayed'], 'true');
      assert.equal((await operationsOf(id)).length, 1);
      assert.equal(await eventsOf(id, 'order.paid', 1), 1);
      // The same key for another request (another body) is refused, not replayed.
      expectError(await pay(id, cust.key, { headers: { 'idempotency-key': key }, body: { x: 1 } }), 422, 'IDEMPOTENCY_KEY_REUSED');
    });

    it('the catalog lists both operations, and their output schemas describe the answers', async () => {
      const catalog = server.runtime.catalog;
      const post = catalog.get('v2.orders.payment')!;
      const get = catalog.get('v2.orders.payment.status')!;
      assert.deepEqual([post.method, post.path, post.kind, post.idempotent], ['POST', '/v2/orders/:id/payment', 'action', true]);
      assert.deepEqual([get.method, get.path, get.kind, get.grants], ['GET', '/v2/orders/:id/payment', 'operation', ['admin', 'owner']]);
      assert.deepEqual(Object.keys(post.output), ['202']);
      provider({ delayMs: 0, failureRate: 1 });
      const id = await orderWithItem();
      const accepted = await pay(id);
      const failed = await settled(id);
      assert.equal(failed.body.status, 'failed');
      const ajv = new Ajv({ strict: false, allErrors: true });
      addFormats(ajv, ['uuid', 'date-time']);
      for (const [schema, body] of [
        [post.output[202], accepted.body],
        [get.output[200], failed.body],
      ] as const) {
        const validate = ajv.compile(schema!);
        assert.ok(validate(body), JSON.stringify(validate.errors));
      }
    });

    it('an action without input (cancel) refuses a body other than {} too: 422, and the order is left alone', async () => {
      const id = await orderWithItem();
      const res = await server.request('POST', `/v2/orders/${id}/cancel`, { key: cust.key, body: { reason: 'changed my mind' } });
      expectError(res, 422, 'VALIDATION_ERROR');
      assert.equal((await server.request('GET', `/v2/orders/${id}`, { key: cust.key })).body.status, 'pending');
      assert.equal((await server.request('POST', `/v2/orders/${id}/cancel`, { key: cust.key, body: {} })).status, 200);
    });

    it('the path answers GET and POST: OPTIONS lists both, other methods are 405', async () => {
      const id = await orderWithItem();
      const options = await server.request('OPTIONS', `/v2/orders/${id}/payment`);
      assert.equal(options.status, 200);
      assert.deepEqual(allowSet(options.headers['allow']), ['GET', 'HEAD', 'OPTIONS', 'POST']);
      const put = await server.request('PUT', `/v2/orders/${id}/payment`, { body: {} });
      expectError(put, 405, 'METHOD_NOT_ALLOWED');
      assert.deepEqual(allowSet(put.headers['allow']), ['GET', 'HEAD', 'OPTIONS', 'POST']);
    });
  });
}

describe('the bound of a payment provider call (CANON_OPERATION_TIMEOUT_MS)', () => {
  let server: TestServer;
  let cust: { userId: string; key: string };
  before(async () => {
    server = await startServer('inject', { operationTimeoutMs: 100 });
    cust = await createCustomer(server, `slow-${randomUUID()}@example.com`);
  });
  afterEach(() => {
    delete process.env.CANON_PAYMENT_DELAY_MS;
  });
  after(async () => server.close());

  it('a provider slower than the bound is tried again under the same key, then fails the payment naming the bound; the order stays pending, free to be paid again or cancelled', async () => {
    process.env.CANON_PAYMENT_DELAY_MS = '60000';
    const productId = (await createProduct(server)).id;
    const order = await server.request('POST', '/v2/orders', { key: cust.key, body: {} });
    assert.equal((await server.request('POST', `/v2/orders/${order.body.id}/order-items`, { key: cust.key, body: { product_id: productId, quantity: 1 } })).status, 201);
    const started = Date.now();
    assertAccepted(await server.request('POST', `/v2/orders/${order.body.id}/payment`, { key: cust.key }), order.body.id);
    let payment: Response;
    do {
      await new Promise((resolve) => setTimeout(resolve, 20));
      payment = await server.request('GET', `/v2/orders/${order.body.id}/payment`, { key: cust.key });
    } while (payment.body.status === 'processing' && Date.now() - started < 10_000);
    assert.equal(payment.body.status, 'failed', payment.text);
    // Five attempts (the default), 100, 200, 400 and 800 ms apart: a timed-out call may have charged, so it is not simply failed.
    assert.equal(payment.body.error, 'The payment did not finish within 100 ms. It was tried 5 times.');
    assert.ok(Date.now() - started < 10_000, 'the bound, not the provider, ended it');
    const pending = await server.request('GET', `/v2/orders/${order.body.id}`, { key: cust.key });
    assert.equal(pending.body.status, 'pending');
    assert.deepEqual(
      ['cancel', 'payment'].map((rel) => linkOf(pending.body, rel)?.rel),
      ['cancel', 'payment'],
    );
    process.env.CANON_PAYMENT_DELAY_MS = '0';
    assertAccepted(await server.request('POST', `/v2/orders/${order.body.id}/payment`, { key: cust.key }), order.body.id);
  });
});
