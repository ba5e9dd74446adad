// E2E: the commerce flow: customer orders, order items and totals, cancel/tracking actions and state rules, reviews.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MODES, startServer, createCustomer, createProduct, type TestServer } from '../../support/harness.js';
import { allowSet, detailFields, expectError, linkOf } from './expect.js';

type Rels = { links: Array<{ rel: string }> };
const rels = (body: Rels): string[] => body.links.map((l) => l.rel).sort();

for (const mode of MODES) {
  describe(`commerce flow (${mode})`, () => {
    let server: TestServer;
    let cust: { userId: string; key: string };
    let other: { userId: string; key: string };
    let mug: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    let kettle: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    /** An order for `owner`, created by the admin so later tests do not depend on the customer-create path tested first. */
    const newOrder = async (owner = cust): Promise<string> => {
      const res = await server.request('POST', '/v2/orders', { body: { user_id: owner.userId } });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.status, 'pending');
      return res.body.id;
    };
    const addItem = (orderId: string, productId: string, quantity: number) =>
      server.request('POST', '/v2/order-items', { key: cust.key, body: { order_id: orderId, product_id: productId, quantity } });
    before(async () => {
      server = await startServer(mode);
      cust = await createCustomer(server, 'buyer@example.com');
      other = await createCustomer(server, 'other@example.com');
      mug = await createProduct(server, { name: 'Mug', price: { amount: 1800, currency: 'EUR' } });
      kettle = await createProduct(server, { name: 'Kettle', price: { amount: 5900, currency: 'EUR' } });
    });
    after(async () => {
      await server.close();
    });

    it('a customer creates an order with {}: its own user_id, pending, zero EUR total, Location', async () => {
      const res = await server.request('POST', '/v2/orders', { key: cust.key, body: {} });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers['location'], `/v2/orders/${res.body.id}`);
      assert.equal(res.body.user_id, cust.userId);
      assert.equal(res.body.status, 'pending');
      assert.deepEqual(res.body.total, { amount: 0, currency: 'EUR' });
      assert.equal('currency' in res.body, false, 'virtual currency field should not be represented');
      assert.equal('shipped_at' in res.body, false);
    });

    it('an order created with currency USD starts at zero USD; a bad currency is 422', async () => {
      const res = await server.request('POST', '/v2/orders', { body: { user_id: cust.userId, currency: 'USD' } });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.body.total, { amount: 0, currency: 'USD' });
      assert.equal(res.body.status, 'pending');
      const bad = await server.request('POST', '/v2/orders', { body: { user_id: cust.userId, currency: 'usd' } });
      assert.ok(detailFields(expectError(bad, 422, 'VALIDATION_ERROR')).includes('currency'));
      const total = await server.request('POST', '/v2/orders', { key: cust.key, body: { total: { amount: 1, currency: 'EUR' } } });
      assert.ok(detailFields(expectError(total, 422, 'VALIDATION_ERROR')).includes('total'));
    });

    it('POST /v2/users/{own id}/orders creates the own order; another user id: 404 NOT_FOUND', async () => {
      const own = await server.request('POST', `/v2/users/${cust.userId}/orders`, { key: cust.key, body: {} });
      assert.equal(own.status, 201, own.text);
      assert.equal(own.headers['location'], `/v2/orders/${own.body.id}`);
      assert.equal(own.body.user_id, cust.userId);
      assert.equal(own.body.status, 'pending');
      expectError(await server.request('POST', `/v2/users/${other.userId}/orders`, { key: cust.key, body: {} }), 404, 'NOT_FOUND');
    });

    it('actions have their own methods: GET cancel and POST tracking are 405 with Allow', async () => {
      const id = await newOrder();
      const get = await server.request('GET', `/v2/orders/${id}/cancel`, { key: cust.key });
      expectError(get, 405, 'METHOD_NOT_ALLOWED');
      assert.deepEqual(allowSet(get.headers['allow']), ['OPTIONS', 'POST']);
      const post = await server.request('POST', `/v2/orders/${id}/tracking`, { key: cust.key });
      expectError(post, 405, 'METHOD_NOT_ALLOWED');
      assert.deepEqual(allowSet(post.headers['allow']), ['GET', 'HEAD', 'OPTIONS']);
      const got = await server.request('GET', `/v2/orders/${id}`);
      assert.equal(got.body.status, 'pending');
    });

    it('a pending order offers self and cancel links to its owner, no tracking', async () => {
      const id = await newOrder();
      const res = await server.request('GET', `/v2/orders/${id}`, { key: cust.key });
      assert.equal(res.status, 200);
      assert.deepEqual(linkOf(res.body, 'cancel'), { rel: 'cancel', href: `/v2/orders/${id}/cancel`, method: 'POST' });
      assert.deepEqual(linkOf(res.body, 'self'), { rel: 'self', href: `/v2/orders/${id}`, method: 'GET' });
      assert.equal(linkOf(res.body, 'tracking'), undefined);
      assert.equal(linkOf(res.body, 'edit'), undefined, 'customers cannot update orders');
      assert.equal(linkOf(res.body, 'delete'), undefined, 'customers cannot delete orders');
    });

    it('adding items copies unit_price and recomputes the order total', async () => {
      const id = await newOrder();
      const a = await server.request('POST', `/v2/orders/${id}/order-items`, { key: cust.key, body: { product_id: mug.id, quantity: 3 } });
      assert.equal(a.status, 201, a.text);
      assert.equal(a.headers['location'], `/v2/order-items/${a.body.id}`);
      assert.equal(a.body.order_id, id);
      assert.equal(a.body.product_id, mug.id);
      assert.equal(a.body.quantity, 3);
      assert.deepEqual(a.body.unit_price, { amount: 1800, currency: 'EUR' });
      let order = await server.request('GET', `/v2/orders/${id}`, { key: cust.key });
      assert.deepEqual(order.body.total, { amount: 3 * 1800, currency: 'EUR' });
      const b = await server.request('POST', `/v2/orders/${id}/order-items`, { key: cust.key, body: { product_id: kettle.id, quantity: 2 } });
      assert.equal(b.status, 201, b.text);
      assert.deepEqual(b.body.unit_price, { amount: 5900, currency: 'EUR' });
      order = await server.request('GET', `/v2/orders/${id}`, { key: cust.key });
      assert.deepEqual(order.body.total, { amount: 3 * 1800 + 2 * 5900, currency: 'EUR' });
      const items = await server.request('GET', `/v2/orders/${id}/order-items`, { key: cust.key });
      assert.equal(items.status, 200);
      assert.deepEqual(items.body.data.map((i: { id: string }) => i.id).sort(), [a.body.id, b.body.id].sort());
    });

    it('POST /v2/order-items with order_id also copies unit_price and recomputes the total', async () => {
      const id = await newOrder();
      const a = await addItem(id, mug.id, 2);
      assert.equal(a.status, 201, a.text);
      assert.equal(a.headers['location'], `/v2/order-items/${a.body.id}`);
      assert.deepEqual(a.body.unit_price, { amount: 1800, currency: 'EUR' });
      const b = await addItem(id, kettle.id, 1);
      assert.equal(b.status, 201, b.text);
      const order = await server.request('GET', `/v2/orders/${id}`, { key: cust.key });
      assert.deepEqual(order.body.total, { amount: 2 * 1800 + 5900, currency: 'EUR' });
      assert.equal((await server.request('DELETE', `/v2/order-items/${b.body.id}`, { key: cust.key })).status, 204);
      const after = await server.request('GET', `/v2/orders/${id}`, { key: cust.key });
      assert.deepEqual(after.body.total, { amount: 2 * 1800, currency: 'EUR' });
    });

    it('a later price change does not alter an item unit_price', async () => {
      const p = await createProduct(server, { name: 'Volatile', price: { amount: 100, currency: 'EUR' } });
      const id = await newOrder();
      const item = await addItem(id, p.id, 1);
      assert.equal(item.status, 201);
      assert.equal((await server.request('PATCH', `/v2/products/${p.id}`, { body: { price: { amount: 999 } } })).status, 200);
      const again = await server.request('GET', `/v2/order-items/${item.body.id}`, { key: cust.key });
      assert.deepEqual(again.body.unit_price, { amount: 100, currency: 'EUR' });
    });

    it('an item with unit_price, a bad quantity or a missing product_id: 422', async () => {
      const id = await newOrder();
      const post = (body: Record<string, unknown>) => server.request('POST', '/v2/order-items', { key: cust.key, body: { order_id: id, ...body } });
      let e = expectError(await post({ product_id: mug.id, quantity: 1, unit_price: { amount: 1, currency: 'EUR' } }), 422, 'VALIDATION_ERROR');
      assert.ok(detailFields(e).includes('unit_price'), JSON.stringify(e.details));
      e = expectError(await post({ product_id: mug.id, quantity: 0 }), 422, 'VALIDATION_ERROR');
      assert.deepEqual(detailFields(e), ['quantity']);
      e = expectError(await post({ quantity: 1 }), 422, 'VALIDATION_ERROR');
      assert.deepEqual(detailFields(e), ['product_id']);
      const order = await server.request('GET', `/v2/orders/${id}`, { key: cust.key });
      assert.deepEqual(order.body.total, { amount: 0, currency: 'EUR' });
    });

    it("a customer cannot add items to another customer's order: 404 NOT_FOUND", async () => {
      const theirs = await newOrder(other);
      const res = await server.request('POST', `/v2/orders/${theirs}/order-items`, { key: cust.key, body: { product_id: mug.id, quantity: 1 } });
      expectError(res, 404, 'NOT_FOUND');
    });

    it('cancel: 200 with status cancelled, no more cancel link; again: 409 INVALID_STATE', async () => {
      const id = await newOrder();
      const res = await server.request('POST', `/v2/orders/${id}/cancel`, { key: cust.key });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.id, id);
      assert.equal(res.body.status, 'cancelled');
      assert.equal(linkOf(res.body, 'cancel'), undefined);
      assert.ok(res.headers['etag']);
      const again = await server.request('POST', `/v2/orders/${id}/cancel`, { key: cust.key });
      expectError(again, 409, 'INVALID_STATE');
      const got = await server.request('GET', `/v2/orders/${id}`, { key: cust.key });
      assert.equal(got.body.status, 'cancelled');
    });

    it('items cannot be added to a cancelled order: 409 INVALID_STATE', async () => {
      const id = await newOrder();
      assert.equal((await server.request('POST', `/v2/orders/${id}/cancel`, { key: cust.key })).status, 200);
      expectError(await addItem(id, mug.id, 1), 409, 'INVALID_STATE');
    });

    it('tracking is 404 until an admin ships the order, then 200 with a tracking_number', async () => {
      const id = await newOrder();
      expectError(await server.request('GET', `/v2/orders/${id}/tracking`, { key: cust.key }), 404, 'NOT_FOUND');
      const paid = await server.request('PATCH', `/v2/orders/${id}`, { body: { status: 'paid' } });
      assert.equal(paid.status, 200, paid.text);
      assert.equal(paid.body.status, 'paid');
      expectError(await server.request('GET', `/v2/orders/${id}/tracking`, { key: cust.key }), 404, 'NOT_FOUND');
      const shipped = await server.request('PATCH', `/v2/orders/${id}`, { body: { status: 'shipped' } });
      assert.equal(shipped.status, 200, shipped.text);
      assert.equal(shipped.body.status, 'shipped');
      assert.deepEqual(rels(shipped.body).includes('tracking'), true);
      assert.equal(linkOf(shipped.body, 'cancel'), undefined, 'a shipped order cannot be cancelled');
      const tracking = await server.request('GET', `/v2/orders/${id}/tracking`, { key: cust.key });
      assert.equal(tracking.status, 200, tracking.text);
      assert.equal(tracking.headers['cache-control'], 'private, no-cache');
      assert.equal(typeof tracking.body.tracking_number, 'string');
      assert.ok(tracking.body.tracking_number.length > 0);
      expectError(await server.request('GET', `/v2/orders/${id}/tracking`, { key: other.key }), 404, 'NOT_FOUND');
      expectError(await server.request('POST', `/v2/orders/${id}/cancel`, { key: cust.key }), 409, 'INVALID_STATE');
    });

    it('an admin PATCH pending → delivered: 409 INVALID_STATE, status unchanged', async () => {
      const id = await newOrder();
      const res = await server.request('PATCH', `/v2/orders/${id}`, { body: { status: 'delivered' } });
      expectError(res, 409, 'INVALID_STATE');
      const got = await server.request('GET', `/v2/orders/${id}`);
      assert.equal(got.body.status, 'pending');
    });

    it('a customer posts a review: 201 with user_id = the customer; listed by item_id', async () => {
      const res = await server.request('POST', '/v2/reviews', { key: cust.key, body: { item_id: mug.id, rating: 4, title: 'Solid mug' } });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers['location'], `/v2/reviews/${res.body.id}`);
      assert.equal(res.body.user_id, cust.userId);
      assert.equal(res.body.item_id, mug.id);
      assert.equal(res.body.rating, 4);
      assert.equal(res.body.title, 'Solid mug');
      assert.equal(res.body.body, null);
      const list = await server.request('GET', `/v2/reviews?item_id=${mug.id}`, { key: other.key });
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.data.map((r: { id: string }) => r.id),
        [res.body.id],
      );
      const none = await server.request('GET', `/v2/reviews?item_id=${kettle.id}`, { key: cust.key });
      assert.deepEqual(none.body.data, []);
    });

    it('a review cannot set user_id, and rating 6 is 422 naming rating', async () => {
      let e = expectError(await server.request('POST', '/v2/reviews', { key: cust.key, body: { item_id: mug.id, rating: 6, title: 'Too good' } }), 422, 'VALIDATION_ERROR');
      assert.ok(detailFields(e).includes('rating'), JSON.stringify(e.details));
      e = expectError(await server.request('POST', '/v2/reviews', { key: cust.key, body: { item_id: mug.id, rating: 0, title: 'Too bad' } }), 422, 'VALIDATION_ERROR');
      assert.ok(detailFields(e).includes('rating'), JSON.stringify(e.details));
      e = expectError(
        await server.request('POST', '/v2/reviews', { key: cust.key, body: { item_id: mug.id, rating: 3, title: 'Spoof', user_id: other.userId } }),
        422,
        'VALIDATION_ERROR',
      );
      assert.ok(detailFields(e).includes('user_id'), JSON.stringify(e.details));
    });

    it('an admin key bound to no user cannot write a review: 403 FORBIDDEN', async () => {
      const res = await server.request('POST', '/v2/reviews', { body: { item_id: mug.id, rating: 3, title: 'Admin' } });
      expectError(res, 403, 'FORBIDDEN');
    });

    it("a customer cannot edit another customer's review: 403 or 404", async () => {
      const mine = await server.request('POST', '/v2/reviews', { key: cust.key, body: { item_id: kettle.id, rating: 5, title: 'Fast boil' } });
      assert.equal(mine.status, 201);
      const res = await server.request('PATCH', `/v2/reviews/${mine.body.id}`, { key: other.key, body: { title: 'Vandalised' } });
      expectError(res, res.status, res.status === 404 ? 'NOT_FOUND' : 'FORBIDDEN');
      assert.ok([403, 404].includes(res.status));
      const got = await server.request('GET', `/v2/reviews/${mine.body.id}`, { key: cust.key });
      assert.equal(got.body.title, 'Fast boil');
    });
  });
}
