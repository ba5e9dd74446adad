// Issue 12.1: an idempotent replay never bypasses authentication, scopes or roles, on every POST route and action.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createProduct, errorShape, MODES, startServer, type Response, type TestServer } from '../../support/harness.js';
import { translateDown } from '../../../src/model/versions.js';

/** How a test sends a request as one credential: an API key or a bearer token. */
type As = { key: string | null; headers: Record<string, string> };
const apiKey = (key: string): As => ({ key, headers: {} });
const bearer = (token: string): As => ({ key: null, headers: { authorization: `Bearer ${token}` } });

async function token(server: TestServer, client: { client_id: string; client_secret: string }, scope?: string): Promise<string> {
  const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
  const res = await fetch(`${server.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }).toString(),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** A POST route's request, made afresh for each run (a new order to cancel, a new email). */
type Fixture = () => Promise<{ path: string; body: Record<string, unknown> }>;

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`an idempotent replay is authorized like any request (${mode})`, () => {
    let server: TestServer;
    let userId: string;
    let full: As;
    let narrow: As;
    let fullToken: As;
    let narrowToken: As;
    let productId: string;
    const fixtures = new Map<string, Fixture>();

    const post = (as: As, path: string, body: unknown, key?: string): Promise<Response> =>
      server.request('POST', path, { key: as.key, headers: { ...as.headers, ...(key ? { 'idempotency-key': key } : {}) }, body });
    const pendingOrder = async (): Promise<string> => {
      const res = await server.request('POST', '/v2/orders', { body: { user_id: userId } });
      assert.equal(res.status, 201, res.text);
      return res.body.id;
    };

    before(async () => {
      server = await startServer(mode);
      const user = await server.request('POST', '/v2/users', {
        body: { email: `admin-${randomUUID()}@example.com`, full_name: 'Admin', password: 'long enough password', role: 'admin' },
      });
      userId = user.body.id;
      // K1 and K2 act for the same admin user, so they share an idempotency scope; K2 may only read products.
      const k1 = await server.request('POST', '/v2/api-keys', { body: { name: 'K1', user_id: userId } });
      const k2 = await server.request('POST', '/v2/api-keys', { body: { name: 'K2', user_id: userId, scopes: ['products:read'] } });
      full = apiKey(k1.body.key);
      narrow = apiKey(k2.body.key);
      // Two tokens of one unrestricted client: one asked for everything, one narrowed to products:read.
      const client = await server.request('POST', '/v2/oauth-clients', { body: { name: 'replayer' } });
      fullToken = bearer(await token(server, client.body));
      narrowToken = bearer(await token(server, client.body, 'products:read'));
      productId = (await createProduct(server)).id;

      fixtures.set('/v2/users', async () => ({
        path: '/v2/users',
        body: { email: `u-${randomUUID()}@example.com`, full_name: 'Minted', password: 'long enough password', role: 'admin' },
      }));
      fixtures.set('/v2/products', async () => ({ path: '/v2/products', body: { name: 'Minted', price: { amount: 100, currency: 'EUR' } } }));
      fixtures.set('/v2/orders', async () => ({ path: '/v2/orders', body: { user_id: userId } }));
      fixtures.set('/v2/users/:id/orders', async () => ({ path: `/v2/users/${userId}/orders`, body: {} }));
      fixtures.set('/v2/order-items', async () => ({ path: '/v2/order-items', body: { order_id: await pendingOrder(), product_id: productId, quantity: 1 } }));
      fixtures.set('/v2/orders/:id/order-items', async () => ({ path: `/v2/orders/${await pendingOrder()}/order-items`, body: { product_id: productId, quantity: 1 } }));
      fixtures.set('/v2/orders/:id/cancel', async () => ({ path: `/v2/orders/${await pendingOrder()}/cancel`, body: {} }));
      fixtures.set('/v2/orders/:id/payment', async () => {
        // A payment needs an order with an item; its 202 is replayed like any other answer.
        const order = await pendingOrder();
        const item = await server.request('POST', `/v2/orders/${order}/order-items`, { body: { product_id: productId, quantity: 1 } });
        assert.equal(item.status, 201, item.text);
        return { path: `/v2/orders/${order}/payment`, body: {} };
      });
      fixtures.set('/v2/reviews', async () => ({ path: '/v2/reviews', body: { item_id: productId, rating: 5, title: 'Minted' } }));
      fixtures.set('/v2/api-keys', async () => ({ path: '/v2/api-keys', body: { name: 'minted' } }));
      fixtures.set('/v2/oauth-clients', async () => ({ path: '/v2/oauth-clients', body: { name: 'minted' } }));
      // A public address literal (no DNS in tests) and a pattern no event has: nothing is ever delivered to it.
      const endpointBody = { url: 'https://93.184.216.34/hook', events: ['never.*'] };
      const endpoint = async (): Promise<string> => {
        const res = await server.request('POST', '/v2/webhook-endpoints', { body: endpointBody });
        assert.equal(res.status, 201, res.text);
        return res.body.id;
      };
      fixtures.set('/v2/webhook-endpoints', async () => ({ path: '/v2/webhook-endpoints', body: endpointBody }));
      fixtures.set('/v2/webhook-endpoints/:id/rotate-secret', async () => ({ path: `/v2/webhook-endpoints/${await endpoint()}/rotate-secret`, body: {} }));
      fixtures.set('/v2/webhook-deliveries/:id/retry', async () => {
        // Only workers write deliveries: a failed one is put in the store as a worker would leave it.
        const now = new Date().toISOString();
        const id = randomUUID();
        const delivery = { id, version: 1, created_at: now, updated_at: now, endpoint_id: await endpoint(), event_id: randomUUID(), event_type: 'never.happened' };
        await server.runtime.store.transaction((tx) => tx.insert('webhook-deliveries', { ...delivery, status: 'failed', attempts: [], next_attempt_at: null, claim: null }));
        return { path: `/v2/webhook-deliveries/${id}/retry`, body: {} };
      });
      // Every older version's routes too: the same request, its path and body in that version (DESIGN §10).
      for (const op of server.runtime.catalog.operations) {
        const version = server.runtime.model.versions.find((v) => v.name === op.version);
        if (op.method !== 'POST' || !op.idempotent || !version?.newer) continue;
        const make = fixtures.get(op.path.replace(`/${version.name}/`, '/v2/'))!;
        fixtures.set(op.path, async () => {
          const { path, body } = await make();
          return { path: path.replace('/v2/', `/${version.name}/`), body: translateDown(version, op.resource!, body) };
        });
      }
    });
    after(async () => server.close());

    it('the table below covers every POST route and POST action the model generates', () => {
      // The catalog's inventory: every keyed (idempotent) POST the server serves. POST /graphql answers in GraphQL's body
      // (its errors in a 200): its replays are authorized the same way, proved in test/e2e/graphql/idempotency.test.ts.
      const routes = server.runtime.catalog.operations.filter((op) => op.method === 'POST' && op.idempotent && op.path !== '/graphql').map((op) => op.path);
      assert.deepEqual([...fixtures.keys()].sort(), routes.sort());
    });

    it('reproduction: K2 (products:read) replaying K1’s Idempotency-Key for POST /v2/api-keys gets 403, never the secret', async () => {
      const refused = await post(narrow, '/v2/api-keys', { name: 'minted' });
      assert.equal(refused.status, 403);
      assert.equal(errorShape(refused).code, 'INSUFFICIENT_SCOPE');
      const created = await post(full, '/v2/api-keys', { name: 'minted' }, 'k-1');
      assert.equal(created.status, 201);
      assert.match(created.body.key, /^ck_/);
      const replayed = await post(narrow, '/v2/api-keys', { name: 'minted' }, 'k-1');
      assert.equal(replayed.status, 403);
      assert.equal(errorShape(replayed).code, 'INSUFFICIENT_SCOPE');
      assert.equal(replayed.headers['idempotent-replayed'], undefined);
      assert.ok(!replayed.text.includes(created.body.key), 'the secret is not in the answer');
      // K1 itself still gets its replay.
      const again = await post(full, '/v2/api-keys', { name: 'minted' }, 'k-1');
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body.key, created.body.key);
    });

    for (const [label, pair] of [
      ['API keys', (): [As, As] => [full, narrow]],
      ['OAuth tokens', (): [As, As] => [fullToken, narrowToken]],
    ] as const) {
      it(`with ${label}: on every POST route and action, the narrowed credential gets 403 before and after the key was used`, async () => {
        const [wide, narrowed] = pair();
        for (const [template, make] of fixtures) {
          // Reviews are written by users; a token acts for a client, so even the wide one may not write them.
          if (label === 'OAuth tokens' && /^\/v[0-9]+\/reviews$/.test(template)) continue;
          const { path, body } = await make();
          const before = await post(narrowed, path, body);
          assert.equal(before.status, 403, `${template} without a key`);
          assert.equal(errorShape(before).code, 'INSUFFICIENT_SCOPE', template);
          const key = randomUUID();
          const first = await post(wide, path, body, key);
          assert.ok(first.status === 201 || first.status === 200 || first.status === 202, `${template}: ${first.status} ${first.text}`);
          const replay = await post(narrowed, path, body, key);
          assert.equal(replay.status, 403, `${template} replayed: ${replay.text}`);
          assert.equal(errorShape(replay).code, 'INSUFFICIENT_SCOPE', template);
          assert.equal(replay.headers['idempotent-replayed'], undefined, template);
          // A different body under the used key is refused for scope too, not told that the key was used.
          const reused = await post(narrowed, path, { ...body, extra: 1 }, key);
          assert.equal(errorShape(reused).code, 'INSUFFICIENT_SCOPE', `${template} reused`);
          const mine = await post(wide, path, body, key);
          assert.equal(mine.headers['idempotent-replayed'], 'true', `${template}: the key's own credential replays`);
          assert.equal(mine.text, first.text, template);
        }
      });
    }

    it('a user demoted after the first request gets 403 on the replay, not the stored 201', async () => {
      const user = await server.request('POST', '/v2/users', {
        body: { email: `demoted-${randomUUID()}@example.com`, full_name: 'Soon customer', password: 'long enough password', role: 'admin' },
      });
      const key = (await server.request('POST', '/v2/api-keys', { body: { name: 'demoted', user_id: user.body.id } })).body.key as string;
      const body = { name: 'admin minted', user_id: user.body.id };
      const first = await post(apiKey(key), '/v2/api-keys', body, 'demote-1');
      assert.equal(first.status, 201);
      const patched = await server.request('PATCH', `/v2/users/${user.body.id}`, { body: { role: 'customer' } });
      assert.equal(patched.status, 200);
      const replay = await post(apiKey(key), '/v2/api-keys', body, 'demote-1');
      assert.equal(replay.status, 403);
      assert.equal(errorShape(replay).code, 'FORBIDDEN');
      assert.ok(!replay.text.includes(first.body.key));
      // The same holds for an action: a customer may not cancel someone else's order, replay or not.
      const order = await pendingOrder();
      const admin = await server.request('POST', '/v2/users', {
        body: { email: `admin2-${randomUUID()}@example.com`, full_name: 'Admin two', password: 'long enough password', role: 'admin' },
      });
      const adminKey = (await server.request('POST', '/v2/api-keys', { body: { name: 'a2', user_id: admin.body.id } })).body.key as string;
      assert.equal((await post(apiKey(adminKey), `/v2/orders/${order}/cancel`, {}, 'cancel-1')).status, 200);
      await server.request('PATCH', `/v2/users/${admin.body.id}`, { body: { role: 'customer' } });
      const cancelReplay = await post(apiKey(adminKey), `/v2/orders/${order}/cancel`, {}, 'cancel-1');
      assert.equal(cancelReplay.status, 404, 'the order is not the demoted user’s: it does not exist for them');
      assert.equal(errorShape(cancelReplay).code, 'NOT_FOUND');
    });
  });
}
