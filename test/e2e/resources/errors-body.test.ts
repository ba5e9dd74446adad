// E2E: request-body and negotiation errors: INVALID_JSON, VALIDATION_ERROR, CONFLICT, 415, 406, 413.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MODES, startServer, createProduct, type TestServer } from '../../support/harness.js';
import { detailFields, expectError } from './expect.js';

const JSON_HEADERS = { 'content-type': 'application/json' };
const PRICE = { amount: 100, currency: 'EUR' };

for (const mode of MODES) {
  describe(`body and negotiation errors (${mode})`, () => {
    let server: TestServer;
    let count = 0;
    const productCount = async (): Promise<number> => {
      const res = await server.request('GET', '/v2/products?limit=100');
      assert.equal(res.status, 200);
      return res.body.data.length;
    };
    before(async () => {
      server = await startServer(mode);
      await createProduct(server);
      count = await productCount();
    });
    after(async () => {
      await server.close();
    });

    const rawPost = (text: string, headers: Record<string, string> = JSON_HEADERS) => server.request('POST', '/v2/products', { headers, body: text });

    it('malformed JSON: 400 INVALID_JSON', async () => {
      expectError(await rawPost('{"name": "x", "price": '), 400, 'INVALID_JSON');
      expectError(await rawPost("{'name': 'x'}"), 400, 'INVALID_JSON');
    });

    it('empty body with Content-Type application/json: 400 INVALID_JSON', async () => {
      expectError(await rawPost(''), 400, 'INVALID_JSON');
    });

    it('a __proto__ key: 400 INVALID_JSON', async () => {
      expectError(await rawPost(`{"name":"x","price":${JSON.stringify(PRICE)},"__proto__":{"polluted":true}}`), 400, 'INVALID_JSON');
      assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    });

    it('a nested __proto__ key: 400 INVALID_JSON', async () => {
      expectError(await rawPost(`{"name":"x","price":{"amount":1,"currency":"EUR","__proto__":{"polluted":true}}}`), 400, 'INVALID_JSON');
    });

    it('a constructor key (with or without prototype): 400 INVALID_JSON', async () => {
      expectError(await rawPost(`{"name":"x","price":${JSON.stringify(PRICE)},"constructor":{"prototype":{"polluted":true}}}`), 400, 'INVALID_JSON');
      expectError(await rawPost(`{"name":"x","price":${JSON.stringify(PRICE)},"constructor":"plain"}`), 400, 'INVALID_JSON');
    });

    it('JSON nested 100 levels deep: 400 INVALID_JSON', async () => {
      const deep = '{"a":'.repeat(100) + '1' + '}'.repeat(100);
      expectError(await rawPost(`{"name":"x","price":${JSON.stringify(PRICE)},"description":${deep}}`), 400, 'INVALID_JSON');
      expectError(await rawPost('['.repeat(100) + ']'.repeat(100)), 400, 'INVALID_JSON');
    });

    it('none of the rejected bodies created anything', async () => {
      assert.equal(await productCount(), count);
    });

    it('a missing required field: 422 VALIDATION_ERROR naming it', async () => {
      const res = await server.request('POST', '/v2/products', { body: { price: PRICE } });
      const e = expectError(res, 422, 'VALIDATION_ERROR');
      assert.ok(detailFields(e).includes('name'), JSON.stringify(e.details));
    });

    it('every invalid field gets its own details entry', async () => {
      const res = await server.request('POST', '/v2/products', { body: { status: 'bogus' } });
      const e = expectError(res, 422, 'VALIDATION_ERROR');
      const fields = detailFields(e);
      for (const f of ['name', 'price', 'status']) assert.ok(fields.includes(f), `${f} missing from ${JSON.stringify(e.details)}`);
    });

    it('an unknown field: 422 with a details entry for it, never stored', async () => {
      const res = await server.request('POST', '/v2/products', { body: { name: 'x', price: PRICE, colour: 'red' } });
      const e = expectError(res, 422, 'VALIDATION_ERROR');
      assert.ok(detailFields(e).includes('colour'), JSON.stringify(e.details));
      const p = await createProduct(server);
      const patch = await server.request('PATCH', `/v2/products/${p.id}`, { body: { colour: 'red' } });
      const pe = expectError(patch, 422, 'VALIDATION_ERROR');
      assert.ok(detailFields(pe).includes('colour'), JSON.stringify(pe.details));
      const got = await server.request('GET', `/v2/products/${p.id}`);
      assert.equal('colour' in got.body, false);
    });

    for (const field of ['id', 'created_at', 'updated_at']) {
      it(`read-only field ${field} in a body: 422 on POST and PATCH`, async () => {
        const value = field === 'id' ? '0190f0e4-0000-7000-8000-000000000001' : '2020-01-01T00:00:00.000Z';
        const post = await server.request('POST', '/v2/products', { body: { name: 'x', price: PRICE, [field]: value } });
        const e = expectError(post, 422, 'VALIDATION_ERROR');
        assert.ok(detailFields(e).includes(field), JSON.stringify(e.details));
        const p = await createProduct(server);
        const patch = await server.request('PATCH', `/v2/products/${p.id}`, { body: { [field]: value } });
        const pe = expectError(patch, 422, 'VALIDATION_ERROR');
        assert.ok(detailFields(pe).includes(field), JSON.stringify(pe.details));
        const got = await server.request('GET', `/v2/products/${p.id}`);
        assert.equal(got.body[field], p[field]);
      });
    }

    it('a reference to no object, a nested body contradicting its path, and a bad field are all worded "The <resource> is invalid."', async () => {
      const missing = '0190f0e4-0000-7000-8000-0000000000ff';
      const reference = expectError(await server.request('POST', '/v2/reviews', { body: { item_id: missing, rating: 5, title: 'Ghost' } }), 422, 'VALIDATION_ERROR');
      assert.equal(reference.message, 'The review is invalid.');
      assert.deepEqual(reference.details, [{ field: 'item_id', message: 'does not name an existing product', value: missing }]);
      const field = expectError(await server.request('POST', '/v2/reviews', { body: { item_id: missing, rating: 9, title: 'Ghost' } }), 422, 'VALIDATION_ERROR');
      assert.equal(field.message, 'The review is invalid.');
      const product = await createProduct(server);
      const order = await server.request('POST', '/v2/orders', { body: {} });
      assert.equal(order.status, 201, order.text);
      const nested = await server.request('POST', `/v2/orders/${order.body.id}/order-items`, { body: { order_id: missing, product_id: product.id, quantity: 1 } });
      assert.equal(expectError(nested, 422, 'VALIDATION_ERROR').message, 'The order item is invalid.');
      const notObject = await server.request('PATCH', `/v2/products/${product.id}`, { headers: { 'content-type': 'application/merge-patch+json' }, body: '[1]' });
      assert.equal(expectError(notObject, 422, 'VALIDATION_ERROR').message, 'The request body must be a JSON object.');
    });

    it('a wrongly typed field: 422 VALIDATION_ERROR naming it', async () => {
      const res = await server.request('POST', '/v2/products', { body: { name: 'x', price: { amount: 'ten', currency: 'EUR' } } });
      const e = expectError(res, 422, 'VALIDATION_ERROR');
      assert.ok(
        detailFields(e).some((f) => f === 'price' || f === 'price.amount'),
        JSON.stringify(e.details),
      );
    });

    it('a duplicate user email: 409 CONFLICT with details field email', async () => {
      const body = { email: 'dup@example.com', full_name: 'Dup', password: 'long enough password' };
      const first = await server.request('POST', '/v2/users', { body });
      assert.equal(first.status, 201, first.text);
      const second = await server.request('POST', '/v2/users', { body: { ...body, full_name: 'Dup 2' } });
      const e = expectError(second, 409, 'CONFLICT');
      assert.ok(detailFields(e).includes('email'), JSON.stringify(e.details));
    });

    it('a duplicate email differing only in case, or PATCHed onto another user: 409 CONFLICT naming email', async () => {
      const a = await server.request('POST', '/v2/users', { body: { email: 'case@example.com', full_name: 'Case', password: 'long enough password' } });
      assert.equal(a.status, 201, a.text);
      const upper = await server.request('POST', '/v2/users', { body: { email: 'CASE@Example.com', full_name: 'Case 2', password: 'long enough password' } });
      assert.ok(detailFields(expectError(upper, 409, 'CONFLICT')).includes('email'));
      const b = await server.request('POST', '/v2/users', { body: { email: 'other-case@example.com', full_name: 'Other', password: 'long enough password' } });
      assert.equal(b.status, 201, b.text);
      const patch = await server.request('PATCH', `/v2/users/${b.body.id}`, { body: { email: 'case@example.com' } });
      assert.ok(detailFields(expectError(patch, 409, 'CONFLICT')).includes('email'));
      const got = await server.request('GET', `/v2/users/${b.body.id}`);
      assert.equal(got.body.email, 'other-case@example.com');
    });

    it('PATCH with Content-Type text/plain: 415; POST with merge-patch+json: 415', async () => {
      const p = await createProduct(server);
      const patch = await server.request('PATCH', `/v2/products/${p.id}`, { headers: { 'content-type': 'text/plain' }, body: '{"name":"x"}' });
      expectError(patch, 415, 'UNSUPPORTED_MEDIA_TYPE');
      const post = await rawPost(JSON.stringify({ name: 'x', price: PRICE }), { 'content-type': 'application/merge-patch+json' });
      expectError(post, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('a JSON body that is not an object (array, string): 422 VALIDATION_ERROR', async () => {
      expectError(await rawPost('[]'), 422, 'VALIDATION_ERROR');
      expectError(await rawPost('"text"'), 422, 'VALIDATION_ERROR');
    });

    it('application/x-www-form-urlencoded is accepted on writes', async () => {
      const user = await server.request('POST', '/v2/users', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=form%40example.com&full_name=Form+User&password=long+enough+password',
      });
      assert.equal(user.status, 201, user.text);
      assert.equal(user.body.email, 'form@example.com');
      assert.equal(user.body.full_name, 'Form User');
    });

    it('Content-Type text/plain: 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const res = await rawPost(JSON.stringify({ name: 'x', price: PRICE }), { 'content-type': 'text/plain' });
      expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('Content-Type application/xml: 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const res = await rawPost('<product/>', { 'content-type': 'application/xml' });
      expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('Accept: text/html: 406 NOT_ACCEPTABLE', async () => {
      const list = await server.request('GET', '/v2/products', { headers: { accept: 'text/html' } });
      expectError(list, 406, 'NOT_ACCEPTABLE');
      const p = await createProduct(server);
      const one = await server.request('GET', `/v2/products/${p.id}`, { headers: { accept: 'text/html' } });
      expectError(one, 406, 'NOT_ACCEPTABLE');
    });

    it('Accept: */* and application/* are fine', async () => {
      assert.equal((await server.request('GET', '/v2/products', { headers: { accept: '*/*' } })).status, 200);
      assert.equal((await server.request('GET', '/v2/products', { headers: { accept: 'application/*' } })).status, 200);
    });

    it('a 2 MiB JSON body: 413 PAYLOAD_TOO_LARGE', async () => {
      const big = JSON.stringify({ name: 'x', price: PRICE, description: 'a'.repeat(2 * 1024 * 1024) });
      const res = await rawPost(big);
      expectError(res, 413, 'PAYLOAD_TOO_LARGE');
    });
  });
}
