// E2E: product create/read/replace/merge-patch/delete, OPTIONS with Allow, and 405 for unsupported methods.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MODES, startServer, createProduct, type TestServer } from '../../support/harness.js';
import { JSON_TYPE, UUID_RE, allowSet, expectError } from './expect.js';

const MISSING_ID = '0190f0e4-0000-7000-8000-000000000000';

for (const mode of MODES) {
  describe(`products CRUD (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
    });
    after(async () => {
      await server.close();
    });

    it('POST /v2/products: 201 with Location; GET on the Location returns the same object', async () => {
      const body = { name: 'Kettle', description: 'Gooseneck', price: { amount: 5900, currency: 'EUR' }, status: 'draft', tags: ['coffee', 'brewing'] };
      const res = await server.request('POST', '/v2/products', { body });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers['content-type'], JSON_TYPE);
      assert.match(res.body.id, UUID_RE);
      assert.equal(res.headers['location'], `/v2/products/${res.body.id}`);
      assert.equal(res.body.name, 'Kettle');
      assert.equal(res.body.description, 'Gooseneck');
      assert.deepEqual(res.body.price, { amount: 5900, currency: 'EUR' });
      assert.equal(res.body.status, 'draft');
      assert.deepEqual(res.body.tags, ['coffee', 'brewing']);
      assert.match(res.body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.match(res.body.updated_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const got = await server.request('GET', res.headers['location']!);
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, res.body);
    });

    it('POST applies defaults: description null, tags [], status active', async () => {
      const res = await server.request('POST', '/v2/products', { body: { name: 'Bare', price: { amount: 1, currency: 'EUR' } } });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.description, null);
      assert.deepEqual(res.body.tags, []);
      assert.equal(res.body.status, 'active');
    });

    it('PUT replaces: omitted description → null, tags → [], status → active', async () => {
      const p = await createProduct(server, { description: 'will go', status: 'draft', tags: ['a', 'b'] });
      const res = await server.request('PUT', `/v2/products/${p.id}`, { body: { name: 'Replaced', price: { amount: 42, currency: 'EUR' } } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.id, p.id);
      assert.equal(res.body.name, 'Replaced');
      assert.deepEqual(res.body.price, { amount: 42, currency: 'EUR' });
      assert.equal(res.body.description, null);
      assert.deepEqual(res.body.tags, []);
      assert.equal(res.body.status, 'active');
      assert.equal(res.body.created_at, p.created_at);
      const got = await server.request('GET', `/v2/products/${p.id}`);
      assert.deepEqual(got.body, res.body);
    });

    it('PUT on an unknown id: 404 NOT_FOUND', async () => {
      const res = await server.request('PUT', `/v2/products/${MISSING_ID}`, { body: { name: 'X', price: { amount: 1, currency: 'EUR' } } });
      expectError(res, 404, 'NOT_FOUND');
    });

    it('PUT missing a required field: 422 VALIDATION_ERROR', async () => {
      const p = await createProduct(server);
      const res = await server.request('PUT', `/v2/products/${p.id}`, { body: { name: 'No price' } });
      const e = expectError(res, 422, 'VALIDATION_ERROR');
      assert.ok(
        (e.details ?? []).some((d) => d.field === 'price'),
        JSON.stringify(e.details),
      );
    });

    it('PATCH (application/json) merges: only supplied fields change', async () => {
      const p = await createProduct(server, { description: 'keep me', status: 'draft', tags: ['x'] });
      const res = await server.request('PATCH', `/v2/products/${p.id}`, { body: { name: 'Renamed' } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.name, 'Renamed');
      assert.equal(res.body.description, 'keep me');
      assert.equal(res.body.status, 'draft');
      assert.deepEqual(res.body.tags, ['x']);
      assert.deepEqual(res.body.price, p.price);
      assert.equal(res.body.created_at, p.created_at);
    });

    it('PATCH with application/merge-patch+json works the same; null removes an optional field', async () => {
      const p = await createProduct(server, { description: 'to remove', tags: ['t'] });
      const res = await server.request('PATCH', `/v2/products/${p.id}`, {
        headers: { 'content-type': 'application/merge-patch+json' },
        body: { description: null, price: { amount: 777 } },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.description, null);
      assert.deepEqual(res.body.price, { amount: 777, currency: 'EUR' });
      assert.equal(res.body.name, p.name);
      assert.deepEqual(res.body.tags, ['t']);
      const got = await server.request('GET', `/v2/products/${p.id}`);
      assert.equal(got.body.description, null);
    });

    it('PATCH with null on a required field: 422 VALIDATION_ERROR', async () => {
      const p = await createProduct(server);
      const res = await server.request('PATCH', `/v2/products/${p.id}`, { body: { name: null } });
      const e = expectError(res, 422, 'VALIDATION_ERROR');
      assert.ok(
        (e.details ?? []).some((d) => d.field === 'name'),
        JSON.stringify(e.details),
      );
    });

    it('PATCH on an unknown id: 404 NOT_FOUND', async () => {
      const res = await server.request('PATCH', `/v2/products/${MISSING_ID}`, { body: { name: 'X' } });
      expectError(res, 404, 'NOT_FOUND');
    });

    it('DELETE: 204 with empty body; GET and a repeat DELETE are 404', async () => {
      const p = await createProduct(server);
      const res = await server.request('DELETE', `/v2/products/${p.id}`);
      assert.equal(res.status, 204);
      assert.equal(res.text, '');
      expectError(await server.request('GET', `/v2/products/${p.id}`), 404, 'NOT_FOUND');
      expectError(await server.request('DELETE', `/v2/products/${p.id}`), 404, 'NOT_FOUND');
    });

    it('GET an unknown id: 404 NOT_FOUND', async () => {
      expectError(await server.request('GET', `/v2/products/${MISSING_ID}`), 404, 'NOT_FOUND');
    });

    it('OPTIONS /v2/products: 200 with Allow', async () => {
      const res = await server.request('OPTIONS', '/v2/products');
      assert.equal(res.status, 200);
      assert.deepEqual(allowSet(res.headers['allow']), ['GET', 'HEAD', 'OPTIONS', 'POST']);
      assert.ok(res.headers['x-request-id']);
    });

    it('OPTIONS /v2/products/{id}: 200 with Allow', async () => {
      const p = await createProduct(server);
      const res = await server.request('OPTIONS', `/v2/products/${p.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(allowSet(res.headers['allow']), ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'PUT']);
    });

    it('PUT on the collection: 405 METHOD_NOT_ALLOWED with Allow', async () => {
      const res = await server.request('PUT', '/v2/products', { body: { name: 'x' } });
      expectError(res, 405, 'METHOD_NOT_ALLOWED');
      assert.deepEqual(allowSet(res.headers['allow']), ['GET', 'HEAD', 'OPTIONS', 'POST']);
    });

    it('DELETE on the collection and POST on an item: 405 METHOD_NOT_ALLOWED with Allow', async () => {
      const del = await server.request('DELETE', '/v2/products');
      expectError(del, 405, 'METHOD_NOT_ALLOWED');
      assert.deepEqual(allowSet(del.headers['allow']), ['GET', 'HEAD', 'OPTIONS', 'POST']);
      const p = await createProduct(server);
      const post = await server.request('POST', `/v2/products/${p.id}`, { body: { name: 'x' } });
      expectError(post, 405, 'METHOD_NOT_ALLOWED');
      assert.deepEqual(allowSet(post.headers['allow']), ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'PUT']);
    });
  });
}
