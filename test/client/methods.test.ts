// canon-client against a listening Canon: every method once, in each version, on SQLite and PostgreSQL; the requests it sent cover every operation of the version's document (issue 28.2, 28.3).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, startServer, type Mode, type TestServer } from '../support/harness.js';
import { PG_URL } from '../support/pg.js';
import { canon, recordingFetch, template, type Sent } from './support.js';
import type { CanonClient } from '../../packages/client/dist/index.js';

const { createClient, CanonError, OperationFailedError, responseOf } = canon;
const MODES: Mode[] = ['listen', ...(PG_URL ? (['listen/postgres'] as const) : [])];
const PASSWORD = 'long enough password';

/** The operations of a committed document, as `METHOD /path/template`; the service endpoints and GraphQL, which the client does not wrap, left out. */
function documentOperations(version: 1 | 2): Set<string> {
  const doc = JSON.parse(readFileSync(`docs/openapi/v${version}.json`, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  // GraphQL (`POST /graphql`) is another query language over the same resources, not an operation the client wraps; nor are GraphiQL's files.
  const service = /^\/(\.well-known\/|metrics$|docs|healthz$|readyz$|graphql$|graphql\/assets\/|v\d+\/openapi\.json$)/;
  const out = new Set<string>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    if (service.test(path)) continue;
    for (const method of Object.keys(methods)) if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) out.add(`${method.toUpperCase()} ${path}`);
  }
  return out;
}

/** Polls `check` every 50 ms for at most 10 s. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What differs between the versions' bodies (DESIGN §10): v1 has `price_cents` + `currency` and users' `name`. */
const shapes = {
  1: {
    product: (name: string, amount: number) => ({ name, price_cents: amount, currency: 'EUR' }),
    amountOf: (p: Record<string, unknown>) => p.price_cents,
    user: (email: string, name: string) => ({ email, name }),
    nameOf: (u: Record<string, unknown>) => u.name,
  },
  2: {
    product: (name: string, amount: number) => ({ name, price: { amount, currency: 'EUR' } }),
    amountOf: (p: Record<string, unknown>) => (p.price as { amount: number }).amount,
    user: (email: string, name: string) => ({ email, full_name: name }),
    nameOf: (u: Record<string, unknown>) => u.full_name,
  },
};

for (const mode of MODES) {
  describe(`canon-client: every method (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      // Webhook targets on loopback (a closed port, so deliveries fail at once) and one attempt each.
      server = await startServer(mode, { webhookAllowPrivate: true, webhookRetrySchedule: '0' });
    });
    after(async () => server.close());

    for (const version of [2, 1] as const) {
      it(`v${version}: every collection, nested collection, action and 202 operation; the requests cover the document`, async () => {
        const shape = shapes[version];
        const recorder = recordingFetch();
        // The v1 client runs the same script: its bodies come from `shape`, its types are checked in test/types/client.tst.ts.
        const make = (credentials: Record<string, unknown>): CanonClient<2> =>
          createClient({ baseUrl: server.baseUrl!, fetch: recorder.fetch, version, ...credentials } as never) as unknown as CanonClient<2>;
        const c = make({ apiKey: ADMIN_KEY });
        const tag = randomUUID().slice(0, 8);

        // products: create, get, a conditional get, a conditional update, a stale one, replace, list, delete.
        const p = await c.products.create(shape.product(`Grinder ${tag}`, 4900) as never);
        assert.equal(p.name, `Grinder ${tag}`);
        assert.equal(shape.amountOf(p), 4900);
        assert.equal(responseOf(p)?.status, 201);
        assert.equal(responseOf(p)?.location, `/v${version}/products/${p.id}`);
        const got = await c.products.get(p.id!);
        assert.equal(got.id, p.id);
        const etag = responseOf(got)!.etag!;
        assert.match(etag, /^"/, 'a strong ETag');
        assert.equal(await c.products.get(p.id!, { ifNoneMatch: etag }), undefined, '304: the caller’s copy is current');
        const patched = await c.products.update(p.id!, { description: 'Burrs of steel' }, { ifMatch: etag });
        assert.equal(patched.description, 'Burrs of steel');
        await assert.rejects(c.products.update(p.id!, { description: 'stale' }, { ifMatch: etag }), (err: unknown) => {
          assert.ok(err instanceof CanonError);
          assert.equal(err.status, 412);
          assert.equal(err.code, 'PRECONDITION_FAILED');
          assert.equal(err.attempts, 1, 'a 412 is not retried');
          assert.match(err.requestId ?? '', /.+/);
          return true;
        });
        const replaced = await c.products.replace(p.id!, shape.product(`Grinder ${tag}`, 2590) as never);
        assert.equal(replaced.description, null, 'PUT resets what it omits');
        const listed = [];
        for await (const item of c.products.list({ q: tag })) listed.push(item.id);
        assert.deepEqual(listed, [p.id]);
        const doomed = await c.products.create(shape.product(`Doomed ${tag}`, 100) as never);
        assert.equal(await c.products.delete(doomed.id!), undefined);
        await assert.rejects(c.products.get(doomed.id!), { name: 'CanonError', status: 404, code: 'NOT_FOUND' });

        // users and API keys; a customer client with its key.
        const email = `dana-${tag}@example.com`;
        const u = await c.users.create({ ...shape.user(email, 'Dana'), password: PASSWORD } as never);
        assert.equal(shape.nameOf(await c.users.get(u.id!)), 'Dana');
        assert.equal(shape.nameOf(await c.users.update(u.id!, shape.user(email, 'Dana B') as never)), 'Dana B');
        assert.equal(shape.nameOf(await c.users.replace(u.id!, shape.user(email, 'Dana C') as never)), 'Dana C');
        const users = [];
        for await (const user of c.users.list({ email } as never)) users.push(user.id);
        assert.deepEqual(users, [u.id]);
        const spare = await c.users.create({ ...shape.user(`spare-${tag}@example.com`, 'Spare'), password: PASSWORD } as never);
        await c.users.delete(spare.id!);
        const k = await c.apiKeys.create({ name: `dana ${tag}`, user_id: u.id });
        assert.match(String(k.key), /^ck_/, 'the secret, shown once');
        assert.equal((await c.apiKeys.get(k.id!)).name, `dana ${tag}`);
        assert.equal((await c.apiKeys.update(k.id!, { name: `dana ${tag} 2` })).name, `dana ${tag} 2`);
        assert.equal((await c.apiKeys.replace(k.id!, { name: `dana ${tag} 3` })).name, `dana ${tag} 3`);
        const keys = [];
        for await (const key of c.apiKeys.list({ user_id: u.id } as never)) keys.push(key.id);
        assert.ok(keys.includes(k.id));
        const cust = make({ apiKey: k.key });

        // orders, their items (nested and flat), the payment (202 → done), tracking, cancel.
        const o = await cust.orders.create({});
        assert.equal(o.status, 'pending');
        const item = await cust.orders.items(o.id!).create({ product_id: p.id!, quantity: 2 });
        assert.equal(item.quantity, 2);
        const items = [];
        for await (const i of cust.orders.items(o.id!).list()) items.push(i.id);
        assert.deepEqual(items, [item.id]);
        assert.equal((await c.orderItems.get(item.id!)).order_id, o.id);
        assert.equal((await c.orderItems.update(item.id!, { quantity: 3 })).quantity, 3);
        assert.equal((await c.orderItems.replace(item.id!, { quantity: 2 })).quantity, 2);
        const extra = await c.orderItems.create({ order_id: o.id!, product_id: p.id!, quantity: 1 });
        const flat = [];
        for await (const i of c.orderItems.list({ order_id: o.id } as never)) flat.push(i.id);
        assert.deepEqual(flat.sort(), [item.id, extra.id].sort());
        await c.orderItems.delete(extra.id!);
        const ofUser = [];
        for await (const order of c.users.orders(u.id!).list()) ofUser.push(order.id);
        assert.deepEqual(ofUser, [o.id]);
        const op = await cust.orders.pay(o.id!);
        assert.equal(op.status, 'processing');
        assert.equal(op.location, `/v${version}/orders/${o.id}/payment`);
        const outcome = await op.done({ timeout: 10_000 });
        assert.equal(outcome.status, 'succeeded');
        assert.equal((await cust.orders.payment(o.id!)).status, 'succeeded');
        assert.equal((await cust.orders.get(o.id!)).status, 'paid');
        assert.equal((await c.orders.update(o.id!, { status: 'shipped' })).status, 'shipped');
        // The document declares only the tracking view's `links` (its other fields are the action's `view`, not described).
        const tracking = (await cust.orders.tracking(o.id!)) as { links: unknown[]; status?: unknown };
        assert.equal(tracking.status, 'in_transit');
        assert.equal((await c.orders.replace(o.id!, { status: 'delivered' })).status, 'delivered');
        const o2 = await c.users.orders(u.id!).create({});
        assert.equal(o2.user_id, u.id);
        assert.equal((await cust.orders.cancel(o2.id!)).status, 'cancelled');
        await assert.rejects(cust.orders.cancel(o2.id!), { name: 'CanonError', status: 409, code: 'INVALID_STATE' });
        const o3 = await c.orders.create({ user_id: u.id! });
        const all = [];
        for await (const order of c.orders.list({ user_id: u.id } as never)) all.push(order.id);
        assert.deepEqual(all.sort(), [o.id, o2.id, o3.id].sort());
        await c.orders.delete(o3.id!);

        // reviews, by the customer.
        const r = await cust.reviews.create({ item_id: p.id!, rating: 5, title: 'Good' });
        assert.equal((await cust.reviews.get(r.id!)).rating, 5);
        assert.equal((await cust.reviews.update(r.id!, { rating: 4 })).rating, 4);
        assert.equal((await cust.reviews.replace(r.id!, { rating: 3, title: 'Fine' })).title, 'Fine');
        const reviews = [];
        for await (const review of cust.reviews.list({ item_id: p.id } as never)) reviews.push(review.id);
        assert.deepEqual(reviews, [r.id]);
        await cust.reviews.delete(r.id!);

        // OAuth clients, and a client authenticated by one (the token endpoint).
        const oc = await c.oauthClients.create({ name: `reporting ${tag}`, scopes: ['products:read'] });
        assert.equal((await c.oauthClients.get(oc.id!)).name, `reporting ${tag}`);
        assert.equal((await c.oauthClients.update(oc.id!, { name: `reporting ${tag} 2` })).name, `reporting ${tag} 2`);
        assert.equal((await c.oauthClients.replace(oc.id!, { name: `reporting ${tag} 3`, scopes: ['products:read'] })).name, `reporting ${tag} 3`);
        const clients = [];
        for await (const client of c.oauthClients.list()) clients.push(client.id);
        assert.ok(clients.includes(oc.id));
        const reporting = make({ oauth: { clientId: oc.client_id, clientSecret: oc.client_secret } });
        assert.equal((await reporting.products.get(p.id!)).id, p.id);
        await c.oauthClients.delete(oc.id!);

        // Webhook endpoints and deliveries: a delivery to the closed port fails, its retry (202) fails again.
        const we = await c.webhookEndpoints.create({ url: 'https://127.0.0.1:9/hook', events: ['product.*'] });
        assert.match(String(we.secret), /^whsec_/);
        assert.equal((await c.webhookEndpoints.get(we.id!)).url, 'https://127.0.0.1:9/hook');
        assert.equal((await c.webhookEndpoints.update(we.id!, { description: 'nobody listens' })).description, 'nobody listens');
        assert.deepEqual((await c.webhookEndpoints.replace(we.id!, { url: 'https://127.0.0.1:9/hook', events: ['product.*'] })).events, ['product.*']);
        assert.match(String((await c.webhookEndpoints.rotateSecret(we.id!)).secret), /^whsec_/);
        const endpoints = [];
        for await (const endpoint of c.webhookEndpoints.list()) endpoints.push(endpoint.id);
        assert.ok(endpoints.includes(we.id));
        await c.products.update(p.id!, { description: 'an event for the endpoint' });
        const failed = await eventually('a failed delivery', async () => {
          for await (const d of c.webhookEndpoints.deliveries(we.id!).list()) if (d.status === 'failed') return d;
          return undefined;
        });
        const dead = [];
        for await (const d of c.webhookDeliveries.list({ status: 'failed' } as never)) dead.push(d.id);
        assert.ok(dead.includes(failed.id));
        assert.equal((await c.webhookDeliveries.get(failed.id!)).endpoint_id, we.id);
        const resend = await c.webhookDeliveries.retry(failed.id!);
        assert.equal(resend.status, 'pending');
        await assert.rejects(resend.done({ timeout: 10_000 }), (err: unknown) => {
          assert.ok(err instanceof OperationFailedError);
          assert.equal((err.result as { status: string }).status, 'failed');
          return true;
        });
        await c.webhookEndpoints.delete(we.id!);

        // The event log.
        const types = [];
        for await (const event of c.events.list({ type: ['product.created', 'product.deleted'], limit: 2 })) {
          types.push(event.type);
          if (types.length === 3) break;
        }
        assert.equal(types.length, 3);
        assert.ok(types.every((t) => t === 'product.created' || t === 'product.deleted'));

        // A cookie session (a jar here): logs in by itself, writes with the CSRF token, logs out and in, changes the password.
        const s = make({ session: { email, password: PASSWORD } });
        const mine = await s.orders.create({});
        assert.equal(mine.user_id, u.id, 'the session is the customer’s');
        assert.match(String((await s.sessions.current()).csrf_token), /.+/);
        await s.sessions.logout();
        assert.equal((await s.sessions.login()).user.id, u.id);
        await s.users.changePassword(u.id!, { current_password: PASSWORD, new_password: 'another long password' });
        // Every session of the user ended; logging in again with the old password is refused.
        await assert.rejects(s.orders.list()[Symbol.asyncIterator]().next(), { name: 'CanonError', status: 401 });

        await c.apiKeys.delete(k.id!);
        await assert.rejects(cust.orders.get(o.id!), { name: 'CanonError', status: 401, code: 'UNAUTHENTICATED' }, 'a deleted key is refused');

        // What was sent covers every operation of this version's document.
        const sent = new Set(recorder.sent.map((r: Sent) => `${r.method} ${template(r.url)}`));
        const missing = [...documentOperations(version)].filter((op) => !sent.has(op));
        assert.deepEqual(missing, [], `operations of docs/openapi/v${version}.json no method reached`);
        assert.ok(
          recorder.sent
            .filter((r) => r.method === 'POST' && !r.url.endsWith('/sessions') && !r.url.endsWith('/oauth/token'))
            .every((r) => /^[0-9a-f-]{36}$/.test(r.headers['idempotency-key'] ?? '')),
          'every POST carries an Idempotency-Key',
        );
      });
    }
  });
}
