// Each version takes bodies in its own shape only (issue 27.3): a v2 field sent to v1 is 422 naming it, and a v1 field sent to v2, on both stores.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCustomer, createProduct, errorShape, MODES, startServer, type Mode, type TestServer } from '../../support/harness.js';

function refused(res: { status: number; text: string }, field: string, message: RegExp): void {
  assert.equal(res.status, 422, res.text);
  const err = errorShape(res as never);
  assert.equal(err.code, 'VALIDATION_ERROR');
  const detail = err.details?.find((d) => d.field === field);
  assert.ok(detail, `a detail names ${field}: ${res.text}`);
  assert.match(detail.message, message);
}

function suite(mode: Mode): void {
  describe(`bodies in each version's shape (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
    });
    after(async () => server.close());

    it('POST, PUT and PATCH on v1 refuse the v2 price object, naming price', async () => {
      const v2Body = { name: 'Tea', price: { amount: 1, currency: 'EUR' } };
      refused(await server.request('POST', '/v1/products', { body: v2Body }), 'price', /is not a field of products in v1/);
      const made = await createProduct(server);
      refused(await server.request('PUT', `/v1/products/${made.id as string}`, { body: v2Body }), 'price', /is not a field of products in v1/);
      refused(await server.request('PATCH', `/v1/products/${made.id as string}`, { body: { price: { amount: 5, currency: 'EUR' } } }), 'price', /not a field of products in v1/);
      // Nothing was written by the refused requests.
      const list = await server.request('GET', '/v2/products?limit=100');
      assert.equal(list.status, 200);
      assert.equal(list.body.data.filter((p: { name: string }) => p.name === 'Tea').length, 0);
      const still = await server.request('GET', `/v2/products/${made.id as string}`);
      assert.deepEqual(still.body.price, made.price);
    });

    it('v2 refuses the v1 flat fields, and v1 checks its own fields’ types under their v1 names', async () => {
      refused(await server.request('POST', '/v2/products', { body: { name: 'Tea', price_cents: 100, currency: 'EUR' } }), 'price_cents', /not a field/);
      refused(await server.request('POST', '/v1/products', { body: { name: 'Tea', price_cents: 'ten', currency: 'EUR' } }), 'price_cents', /must be integer/);
      refused(await server.request('POST', '/v1/products', { body: { name: 'Tea', price_cents: 100 } }), 'currency', /is required/);
      refused(
        await server.request('POST', '/v1/users', { body: { email: 'v1shape@example.com', full_name: 'V', password: 'long enough password' } }),
        'full_name',
        /not a field of users in v1/,
      );
    });

    it('v1 bodies in v1 shape still work: JSON, form-encoded, merge patch of one part, nested create without the parent field', async () => {
      const json = await server.request('POST', '/v1/products', { body: { name: 'Shape JSON', price_cents: 250, currency: 'EUR' } });
      assert.equal(json.status, 201, json.text);
      const form = await server.request('POST', '/v1/products', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=Shape+form&price_cents=300&currency=USD',
      });
      assert.equal(form.status, 201, form.text);
      assert.equal(form.body.price_cents, 300);
      const patched = await server.request('PATCH', `/v1/products/${json.body.id as string}`, { body: { price_cents: 260 } });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.price_cents, 260);
      assert.equal(patched.body.currency, 'EUR');
      const customer = await createCustomer(server, `shapes-${mode.replace(/\W/g, '')}@example.com`);
      const order = await server.request('POST', '/v1/orders', { key: customer.key, body: { currency: 'EUR' } });
      assert.equal(order.status, 201, order.text);
      const item = await server.request('POST', `/v1/orders/${order.body.id as string}/order-items`, {
        key: customer.key,
        body: { product_id: json.body.id, quantity: 2 },
      });
      assert.equal(item.status, 201, item.text);
    });

    it('authorization is decided before the body: a customer sending a v2 body to v1 products is 403, not 422', async () => {
      const customer = await createCustomer(server, `shapes-403-${mode.replace(/\W/g, '')}@example.com`);
      const res = await server.request('POST', '/v1/products', { key: customer.key, body: { name: 'Tea', price: { amount: 1, currency: 'EUR' } } });
      assert.equal(res.status, 403, res.text);
    });
  });
}

for (const mode of MODES) suite(mode);
