// E2E: routing, path and query errors: ROUTE_NOT_FOUND, BAD_REQUEST for a non-UUID id, INVALID_QUERY for list parameters and cursors.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MODES, startServer, createProduct, type TestServer } from '../../support/harness.js';
import { detailFields, expectError } from './expect.js';

for (const mode of MODES) {
  describe(`routing and query errors (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
      for (let i = 0; i < 3; i++) await createProduct(server, { name: `Q ${i}` });
    });
    after(async () => {
      await server.close();
    });

    it('an unknown route: 404 ROUTE_NOT_FOUND', async () => {
      expectError(await server.request('GET', '/v2/nothing-here'), 404, 'ROUTE_NOT_FOUND');
      // A version the server does not serve is 400 UNSUPPORTED_VERSION instead (test/e2e/versioning/v1.test.ts).
      expectError(await server.request('GET', '/v3/products'), 400, 'UNSUPPORTED_VERSION');
      expectError(await server.request('POST', '/v2/products/extra/deep/path', { body: {} }), 404, 'ROUTE_NOT_FOUND');
    });

    it('no action-style paths exist', async () => {
      expectError(await server.request('GET', '/getUser'), 404, 'ROUTE_NOT_FOUND');
      const p = await createProduct(server);
      expectError(await server.request('POST', `/v2/products/${p.id}/delete`), 404, 'ROUTE_NOT_FOUND');
    });

    it('OPTIONS on an unknown route: 404 ROUTE_NOT_FOUND', async () => {
      expectError(await server.request('OPTIONS', '/v2/nothing-here'), 404, 'ROUTE_NOT_FOUND');
    });

    it('a non-UUID id in the path: 400 BAD_REQUEST', async () => {
      expectError(await server.request('GET', '/v2/products/not-a-uuid'), 400, 'BAD_REQUEST');
      expectError(await server.request('PATCH', '/v2/products/123', { body: { name: 'x' } }), 400, 'BAD_REQUEST');
      expectError(await server.request('DELETE', '/v2/products/abc'), 400, 'BAD_REQUEST');
    });

    it('?limit=101: 400 INVALID_QUERY with details naming limit', async () => {
      const e = expectError(await server.request('GET', '/v2/products?limit=101'), 400, 'INVALID_QUERY');
      assert.ok(detailFields(e).includes('limit'), JSON.stringify(e.details));
    });

    it('?limit=100 is allowed; ?limit=0, -1 and abc are 400 INVALID_QUERY', async () => {
      assert.equal((await server.request('GET', '/v2/products?limit=100')).status, 200);
      for (const v of ['0', '-1', 'abc']) {
        const e = expectError(await server.request('GET', `/v2/products?limit=${v}`), 400, 'INVALID_QUERY');
        assert.ok(detailFields(e).includes('limit'), JSON.stringify(e.details));
      }
    });

    it('?sort=password on users: 400 INVALID_QUERY', async () => {
      const e = expectError(await server.request('GET', '/v2/users?sort=password'), 400, 'INVALID_QUERY');
      assert.ok((e.details ?? []).length >= 1, 'details expected');
    });

    it('?sort on a non-sortable field and ?sort=-password_hash: 400 INVALID_QUERY', async () => {
      expectError(await server.request('GET', '/v2/products?sort=description'), 400, 'INVALID_QUERY');
      expectError(await server.request('GET', '/v2/users?sort=-password_hash'), 400, 'INVALID_QUERY');
    });

    it('a declared sort works', async () => {
      const res = await server.request('GET', '/v2/products?sort=-name');
      assert.equal(res.status, 200);
      const names = res.body.data.map((p: { name: string }) => p.name);
      assert.deepEqual(names, [...names].sort().reverse());
    });

    it('?nonexistent=1: 400 INVALID_QUERY with details naming it', async () => {
      const e = expectError(await server.request('GET', '/v2/products?nonexistent=1'), 400, 'INVALID_QUERY');
      assert.ok(detailFields(e).includes('nonexistent'), JSON.stringify(e.details));
    });

    it('filtering on a non-filterable field (password_hash, description): 400 INVALID_QUERY', async () => {
      expectError(await server.request('GET', '/v2/users?password_hash=x'), 400, 'INVALID_QUERY');
      expectError(await server.request('GET', '/v2/products?description=x'), 400, 'INVALID_QUERY');
    });

    it('?fields=password on users: 400 INVALID_QUERY', async () => {
      expectError(await server.request('GET', '/v2/users?fields=id,password'), 400, 'INVALID_QUERY');
    });

    it('a tampered cursor: 400 INVALID_QUERY', async () => {
      const first = await server.request('GET', '/v2/products?limit=1');
      assert.equal(first.status, 200);
      const cursor: string = first.body.pagination.next_cursor;
      assert.ok(cursor, 'expected a next_cursor');
      const flipped = cursor.slice(0, -2) + (cursor.at(-2) === 'A' ? 'B' : 'A') + cursor.at(-1);
      const tampered = [flipped, 'X' + cursor, cursor.slice(1), 'garbage', Buffer.from('{"id":"x"}').toString('base64url')];
      for (const c of tampered) {
        const res = await server.request('GET', `/v2/products?limit=1&cursor=${encodeURIComponent(c)}`);
        expectError(res, 400, 'INVALID_QUERY');
      }
    });
  });
}
