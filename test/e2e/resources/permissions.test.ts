// E2E: authentication (401 + WWW-Authenticate), customer permissions (403/404/422), write-only passwords and API key secrets.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MODES, startServer, createCustomer, createProduct, type Response, type TestServer } from '../../support/harness.js';
import { detailFields, expectError } from './expect.js';

const PASSWORD = 'long enough password';

for (const mode of MODES) {
  describe(`authentication and permissions (${mode})`, () => {
    let server: TestServer;
    let alice: { userId: string; key: string };
    let bob: { userId: string; key: string };
    let aliceOrder: string;
    let bobOrder: string;
    before(async () => {
      server = await startServer(mode);
      alice = await createCustomer(server, 'alice@example.com');
      bob = await createCustomer(server, 'bob@example.com');
      const a = await server.request('POST', '/v2/orders', { key: alice.key, body: {} });
      const b = await server.request('POST', '/v2/orders', { key: bob.key, body: {} });
      assert.equal(a.status, 201, a.text);
      assert.equal(b.status, 201, b.text);
      aliceOrder = a.body.id;
      bobOrder = b.body.id;
    });
    after(async () => {
      await server.close();
    });

    it('no X-API-Key: 401 UNAUTHENTICATED with WWW-Authenticate', async () => {
      for (const path of ['/v2/products', '/v2/orders', '/v2/users']) {
        const res = await server.request('GET', path, { key: null });
        expectError(res, 401, 'UNAUTHENTICATED');
        assert.ok(res.headers['www-authenticate'], `WWW-Authenticate missing on ${path}`);
      }
    });

    it('a wrong key: 401 UNAUTHENTICATED with WWW-Authenticate', async () => {
      for (const key of ['ck_wrong_key_0000000000000000000000', 'nonsense', '']) {
        const res = await server.request('GET', '/v2/products', { key });
        expectError(res, 401, 'UNAUTHENTICATED');
        assert.ok(res.headers['www-authenticate'], 'WWW-Authenticate missing');
      }
    });

    it('a customer reads products but cannot create, update or delete one: 403 FORBIDDEN', async () => {
      assert.equal((await server.request('GET', '/v2/products', { key: alice.key })).status, 200);
      expectError(await server.request('POST', '/v2/products', { key: alice.key, body: { name: 'x', price: { amount: 1, currency: 'EUR' } } }), 403, 'FORBIDDEN');
      const p = await createProduct(server);
      const got = await server.request('GET', `/v2/products/${p.id}`, { key: alice.key });
      assert.equal(got.status, 200);
      assert.deepEqual(
        got.body.links.map((l: { rel: string }) => l.rel),
        ['self'],
      );
      expectError(await server.request('PATCH', `/v2/products/${p.id}`, { key: alice.key, body: { name: 'y' } }), 403, 'FORBIDDEN');
      expectError(await server.request('DELETE', `/v2/products/${p.id}`, { key: alice.key }), 403, 'FORBIDDEN');
    });

    it('list links offer create only where allowed', async () => {
      const admin = await server.request('GET', '/v2/products');
      const cust = await server.request('GET', '/v2/products', { key: alice.key });
      const rels = (r: { body: { links: Array<{ rel: string }> } }) => r.body.links.map((l) => l.rel);
      assert.ok(rels(admin).includes('self') && rels(admin).includes('create'), JSON.stringify(admin.body.links));
      assert.ok(rels(cust).includes('self') && !rels(cust).includes('create'), JSON.stringify(cust.body.links));
      assert.deepEqual(
        admin.body.links.find((l: { rel: string }) => l.rel === 'create'),
        { rel: 'create', href: '/v2/products', method: 'POST' },
      );
    });

    it("a customer cannot read another customer's order: 404 NOT_FOUND", async () => {
      assert.equal((await server.request('GET', `/v2/orders/${aliceOrder}`, { key: alice.key })).status, 200);
      expectError(await server.request('GET', `/v2/orders/${bobOrder}`, { key: alice.key }), 404, 'NOT_FOUND');
      expectError(await server.request('POST', `/v2/orders/${bobOrder}/cancel`, { key: alice.key }), 404, 'NOT_FOUND');
      expectError(await server.request('GET', `/v2/orders/${bobOrder}/order-items`, { key: alice.key }), 404, 'NOT_FOUND');
    });

    it('GET /v2/orders shows a customer only its own orders', async () => {
      const res = await server.request('GET', '/v2/orders', { key: alice.key });
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.data.map((o: { id: string }) => o.id),
        [aliceOrder],
      );
      const admin = await server.request('GET', '/v2/orders');
      const ids = admin.body.data.map((o: { id: string }) => o.id);
      assert.ok(ids.includes(aliceOrder) && ids.includes(bobOrder));
      const filtered = await server.request('GET', `/v2/orders?user_id=${bob.userId}`, { key: alice.key });
      assert.equal(filtered.status, 200);
      assert.deepEqual(filtered.body.data, []);
    });

    it('GET /v2/users/{own id}/orders: own orders; another user id: 404 NOT_FOUND', async () => {
      const own = await server.request('GET', `/v2/users/${alice.userId}/orders`, { key: alice.key });
      assert.equal(own.status, 200);
      assert.deepEqual(
        own.body.data.map((o: { id: string }) => o.id),
        [aliceOrder],
      );
      expectError(await server.request('GET', `/v2/users/${bob.userId}/orders`, { key: alice.key }), 404, 'NOT_FOUND');
    });

    it('a customer cannot create an order for another user', async () => {
      const res = await server.request('POST', '/v2/orders', { key: alice.key, body: { user_id: bob.userId } });
      assert.ok([403, 404, 422].includes(res.status), `got ${res.status} ${res.text}`);
      expectAnyRejection(res);
      const bobs = await server.request('GET', `/v2/users/${bob.userId}/orders`);
      assert.deepEqual(
        bobs.body.data.map((o: { id: string }) => o.id),
        [bobOrder],
      );
    });

    it('a customer reads and PATCHes its own full_name', async () => {
      const got = await server.request('GET', `/v2/users/${alice.userId}`, { key: alice.key });
      assert.equal(got.status, 200);
      assert.equal(got.body.email, 'alice@example.com');
      const res = await server.request('PATCH', `/v2/users/${alice.userId}`, { key: alice.key, body: { full_name: 'Alice Renamed' } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.full_name, 'Alice Renamed');
      assert.equal(res.body.role, 'customer');
    });

    it('a customer cannot PATCH its own role: 422, role unchanged', async () => {
      const res = await server.request('PATCH', `/v2/users/${alice.userId}`, { key: alice.key, body: { role: 'admin' } });
      const e = expectError(res, 422, 'VALIDATION_ERROR');
      assert.ok(detailFields(e).includes('role'), JSON.stringify(e.details));
      const got = await server.request('GET', `/v2/users/${alice.userId}`);
      assert.equal(got.body.role, 'customer');
      expectError(await server.request('POST', '/v2/products', { key: alice.key, body: { name: 'x', price: { amount: 1, currency: 'EUR' } } }), 403, 'FORBIDDEN');
    });

    it('password cannot be changed by PATCH or PUT on the user: 422 naming password', async () => {
      const mine = await server.request('PATCH', `/v2/users/${alice.userId}`, { key: alice.key, body: { password: 'another long password' } });
      assert.ok(detailFields(expectError(mine, 422, 'VALIDATION_ERROR')).includes('password'));
      const admin = await server.request('PATCH', `/v2/users/${bob.userId}`, { body: { password: 'another long password' } });
      assert.ok(detailFields(expectError(admin, 422, 'VALIDATION_ERROR')).includes('password'));
    });

    it('a customer cannot read or list other users: 404 / only itself', async () => {
      expectError(await server.request('GET', `/v2/users/${bob.userId}`, { key: alice.key }), 404, 'NOT_FOUND');
      expectError(await server.request('PATCH', `/v2/users/${bob.userId}`, { key: alice.key, body: { full_name: 'hacked' } }), 404, 'NOT_FOUND');
      const list = await server.request('GET', '/v2/users', { key: alice.key });
      if (list.status === 200)
        assert.deepEqual(
          list.body.data.map((u: { id: string }) => u.id),
          [alice.userId],
        );
      else expectError(list, 403, 'FORBIDDEN');
    });

    it('a customer cannot PATCH an order status: 403 FORBIDDEN', async () => {
      const before = await server.request('GET', `/v2/orders/${aliceOrder}`);
      const res = await server.request('PATCH', `/v2/orders/${aliceOrder}`, { key: alice.key, body: { status: 'paid' } });
      expectError(res, 403, 'FORBIDDEN');
      const got = await server.request('GET', `/v2/orders/${aliceOrder}`);
      assert.equal(got.body.status, before.body.status);
      assert.equal(got.headers['etag'], before.headers['etag']);
    });

    it('a password is never returned (create, get, list, patch, put)', async () => {
      const created = await server.request('POST', '/v2/users', { body: { email: 'pw@example.com', full_name: 'Pw', password: PASSWORD } });
      assert.equal(created.status, 201);
      const id = created.body.id;
      const responses = [
        created,
        await server.request('GET', `/v2/users/${id}`),
        await server.request('GET', '/v2/users?limit=100'),
        await server.request('PATCH', `/v2/users/${id}`, { body: { full_name: 'Pw 2' } }),
        await server.request('PUT', `/v2/users/${id}`, { body: { email: 'pw@example.com', full_name: 'Pw 3' } }),
        await server.request('GET', `/v2/users/${alice.userId}`, { key: alice.key }),
      ];
      for (const r of responses) {
        assert.ok(r.status === 200 || r.status === 201, `${r.status} ${r.text}`);
        assert.ok(!/"password/.test(r.text), `password-ish key leaked: ${r.text}`);
        assert.ok(!r.text.includes(PASSWORD), 'password value leaked');
        assert.ok(!r.text.includes('scrypt'), 'hash leaked');
      }
    });

    it('POST /v2/api-keys: 201, key ck_… once, Cache-Control no-store; never shown again', async () => {
      const res = await server.request('POST', '/v2/api-keys', { body: { name: 'one-time', user_id: alice.userId } });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(typeof res.body.key, 'string');
      assert.ok(res.body.key.startsWith('ck_'), res.body.key);
      assert.equal(res.headers['location'], `/v2/api-keys/${res.body.id}`);
      const secret: string = res.body.key;
      const got = await server.request('GET', `/v2/api-keys/${res.body.id}`);
      const list = await server.request('GET', '/v2/api-keys?limit=100');
      const patched = await server.request('PATCH', `/v2/api-keys/${res.body.id}`, { body: { name: 'renamed' } });
      for (const r of [got, list, patched]) {
        assert.equal(r.status, 200, r.text);
        assert.ok(!r.text.includes(secret), 'secret shown again');
        assert.ok(!/"key(_hash)?"/.test(r.text), `key field present: ${r.text}`);
      }
      assert.equal((await server.request('GET', '/v2/products', { key: secret })).status, 200);
    });

    it('a customer cannot create or list API keys: 403 FORBIDDEN', async () => {
      expectError(await server.request('POST', '/v2/api-keys', { key: alice.key, body: { name: 'mine' } }), 403, 'FORBIDDEN');
      expectError(await server.request('GET', '/v2/api-keys', { key: alice.key }), 403, 'FORBIDDEN');
    });

    it('DELETE of an API key: 204, then the key is 401', async () => {
      const created = await server.request('POST', '/v2/api-keys', { body: { name: 'doomed', user_id: bob.userId } });
      assert.equal(created.status, 201);
      assert.equal((await server.request('GET', '/v2/orders', { key: created.body.key })).status, 200);
      const del = await server.request('DELETE', `/v2/api-keys/${created.body.id}`);
      assert.equal(del.status, 204);
      assert.equal(del.text, '');
      const res = await server.request('GET', '/v2/orders', { key: created.body.key });
      expectError(res, 401, 'UNAUTHENTICATED');
      assert.ok(res.headers['www-authenticate']);
    });
  });
}

/** Any rejection must still carry the §5 error body. */
function expectAnyRejection(res: Response): void {
  const code = res.status === 403 ? 'FORBIDDEN' : res.status === 404 ? 'NOT_FOUND' : 'VALIDATION_ERROR';
  expectError(res, res.status, code);
}
