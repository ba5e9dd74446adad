// Permission matrix: anonymous, customer and admin against every route of the reference domain and the platform resources (DESIGN §3, §4, §8).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_KEY, MODES, createCustomer, createProduct, startServer, type Response, type TestServer } from '../../support/harness.js';
import { expectError } from '../resources/expect.js';

/*
 * How to read a row: `{own}` is an object owned by the customer principal (Alice), `{other}` one owned
 * by another customer (Bob); `{id}` is used where the resource has no ownership. The admin principal
 * is ADMIN_KEY, an admin key bound to no user, so it owns nothing and `{own}` / `{other}` are just
 * objects to it. Anonymous (no credential) is 401 UNAUTHENTICATED with WWW-Authenticate on every row.
 * Rows whose request consumes its object (DELETE, cancel, status changes, password changes) build a
 * fresh one for every principal, so rows and principals are independent.
 */

type Who = 'anonymous' | 'customer' | 'admin';
const WHO: Who[] = ['anonymous', 'customer', 'admin'];

type Outcome = 200 | 201 | 204 | '403 FORBIDDEN' | '404 NOT_FOUND' | '409 INVALID_STATE' | '422 VALIDATION_ERROR';
const ANONYMOUS = '401 UNAUTHENTICATED';

const PASSWORD = 'long enough password'; // createCustomer's password
const NEW_PASSWORD = 'a brand new long password';

interface Customer {
  userId: string;
  key: string;
  email: string;
}

interface Target {
  path: string;
  body?: unknown;
  /** The key the customer principal uses for this row, when it is not Alice's (a fresh customer acting on itself). */
  customerKey?: string;
  /** An object whose representation (ETag) must not change when the request is refused. Item paths of PUT/PATCH/DELETE by default. */
  unchanged?: string;
}

interface Env {
  server: TestServer;
  alice: Customer;
  bob: Customer;
  /** An active product order items are made of. */
  product: string;
  /** The product Alice's and Bob's shared reviews are about (listed by item_id). */
  reviewed: string;
  /** The product fresh reviews (created to be deleted) are about. */
  scratch: string;
  aliceOrder: string;
  bobOrder: string;
  aliceItem: string;
  bobItem: string;
  aliceShipped: string;
  bobShipped: string;
  aliceReview: string;
  bobReview: string;
  /** An API key record bound to Alice (not the one she authenticates with). */
  aliceKeyRecord: string;
  client: string;
  fresh: Fresh;
}

interface Fresh {
  customer(): Promise<Customer>;
  user(): Promise<{ id: string; email: string }>;
  order(ownerKey: string): Promise<string>;
  item(orderId: string): Promise<string>;
  shipped(ownerKey: string): Promise<string>;
  review(authorKey: string, productId: string): Promise<string>;
  product(): Promise<string>;
  apiKey(userId: string): Promise<string>;
  client(): Promise<string>;
}

interface Row {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  target(env: Env, who: Who): Promise<Target> | Target;
  expect: { customer: Outcome; admin: Outcome };
  /** Further assertions on a successful response. */
  check?(res: Response, env: Env, who: Who, target: Target): Promise<void> | void;
}

const ids = (res: Response): string[] => (res.body.data as Array<{ id: string }>).map((o) => o.id);

function created(body: unknown, what: string, res: Response): string {
  if (res.status !== 201) throw new Error(`creating ${what} failed: ${res.status} ${res.text} (body ${JSON.stringify(body)})`);
  return res.body.id as string;
}

function freshHelpers(server: TestServer, product: () => string): Fresh {
  let n = 0;
  const post = async (path: string, body: unknown, key?: string): Promise<string> => created(body, path, await server.request('POST', path, { body, ...(key ? { key } : {}) }));
  const patch = async (path: string, body: unknown): Promise<void> => {
    const res = await server.request('PATCH', path, { body });
    if (res.status !== 200) throw new Error(`PATCH ${path} failed: ${res.status} ${res.text}`);
  };
  const fresh: Fresh = {
    async customer() {
      const email = `fresh-customer-${++n}@example.com`;
      return { ...(await createCustomer(server, email)), email };
    },
    async user() {
      const email = `fresh-user-${++n}@example.com`;
      return { id: await post('/v2/users', { email, full_name: `Fresh ${n}`, password: PASSWORD }), email };
    },
    order: (ownerKey) => post('/v2/orders', {}, ownerKey),
    item: (orderId) => post(`/v2/orders/${orderId}/order-items`, { product_id: product(), quantity: 1 }),
    async shipped(ownerKey) {
      const id = await fresh.order(ownerKey);
      await patch(`/v2/orders/${id}`, { status: 'paid' });
      await patch(`/v2/orders/${id}`, { status: 'shipped' });
      return id;
    },
    review: (authorKey, productId) => post('/v2/reviews', { item_id: productId, rating: 4, title: `Review ${++n}`, body: 'Good.' }, authorKey),
    product: async () => (await createProduct(server, { name: `Product ${++n}` })).id as string,
    apiKey: (userId) => post('/v2/api-keys', { name: `key ${++n}`, user_id: userId }),
    client: () => post('/v2/oauth-clients', { name: `client ${++n}` }),
  };
  return fresh;
}

async function setup(server: TestServer): Promise<Env> {
  const alice = { ...(await createCustomer(server, 'alice@example.com')), email: 'alice@example.com' };
  const bob = { ...(await createCustomer(server, 'bob@example.com')), email: 'bob@example.com' };
  let productId = '';
  const fresh = freshHelpers(server, () => productId);
  productId = await fresh.product();
  const reviewed = await fresh.product();
  const scratch = await fresh.product();
  const aliceOrder = await fresh.order(alice.key);
  const bobOrder = await fresh.order(bob.key);
  return {
    server,
    alice,
    bob,
    product: productId,
    reviewed,
    scratch,
    aliceOrder,
    bobOrder,
    aliceItem: await fresh.item(aliceOrder),
    bobItem: await fresh.item(bobOrder),
    aliceShipped: await fresh.shipped(alice.key),
    bobShipped: await fresh.shipped(bob.key),
    aliceReview: await fresh.review(alice.key, reviewed),
    bobReview: await fresh.review(bob.key, reviewed),
    aliceKeyRecord: await fresh.apiKey(alice.userId),
    client: await fresh.client(),
    fresh,
  };
}

/** `own` → Alice's, `other` → Bob's. */
const pick = <T>(whose: 'own' | 'other', own: T, other: T): T => (whose === 'own' ? own : other);

function userRows(): Row[] {
  const rows: Row[] = [
    {
      name: 'GET /v2/users',
      method: 'GET',
      target: () => ({ path: '/v2/users?limit=100' }),
      expect: { customer: 200, admin: 200 },
      check(res, env, who) {
        // A customer's list holds only itself; an admin's everyone.
        if (who === 'customer') assert.deepEqual(ids(res), [env.alice.userId]);
        else assert.ok(ids(res).includes(env.alice.userId) && ids(res).includes(env.bob.userId));
      },
    },
    {
      name: 'POST /v2/users',
      method: 'POST',
      target: (_env, who) => ({ path: '/v2/users', body: { email: `created-by-${who}@example.com`, full_name: 'Created', password: PASSWORD } }),
      expect: { customer: '403 FORBIDDEN', admin: 201 },
    },
  ];
  for (const whose of ['own', 'other'] as const) {
    const user = (env: Env): Customer => pick(whose, env.alice, env.bob);
    const customerSees: Outcome = whose === 'own' ? 200 : '404 NOT_FOUND';
    rows.push(
      {
        name: `GET /v2/users/{${whose}}`,
        method: 'GET',
        target: (env) => ({ path: `/v2/users/${user(env).userId}` }),
        expect: { customer: customerSees, admin: 200 },
        check: (res, env) => assert.equal(res.body.id, user(env).userId),
      },
      {
        name: `PUT /v2/users/{${whose}}`,
        method: 'PUT',
        target: (env, who) => ({ path: `/v2/users/${user(env).userId}`, body: { email: user(env).email, full_name: `Put by ${who}` } }),
        expect: { customer: customerSees, admin: 200 },
        check: (res, _env, who) => {
          assert.equal(res.body.full_name, `Put by ${who}`);
          assert.equal(res.body.role, 'customer');
        },
      },
      {
        name: `PATCH /v2/users/{${whose}}`,
        method: 'PATCH',
        target: (env, who) => ({ path: `/v2/users/${user(env).userId}`, body: { full_name: `Patched by ${who}` } }),
        expect: { customer: customerSees, admin: 200 },
        check: (res, _env, who) => assert.equal(res.body.full_name, `Patched by ${who}`),
      },
    );
  }
  rows.push(
    {
      // A customer sees itself but may not delete its account (delete: admin).
      name: 'DELETE /v2/users/{own}',
      method: 'DELETE',
      async target(env) {
        const c = await env.fresh.customer();
        return { path: `/v2/users/${c.userId}`, customerKey: c.key };
      },
      expect: { customer: '403 FORBIDDEN', admin: 204 },
    },
    {
      name: 'DELETE /v2/users/{other}',
      method: 'DELETE',
      target: async (env) => ({ path: `/v2/users/${(await env.fresh.user()).id}` }),
      expect: { customer: '404 NOT_FOUND', admin: 204 },
    },
  );
  return rows;
}

function productRows(): Row[] {
  const body = (who: Who) => ({ name: `Product by ${who}`, description: 'Replaced', price: { amount: 1500, currency: 'EUR' }, status: 'active', tags: ['x'] });
  return [
    {
      name: 'GET /v2/products',
      method: 'GET',
      target: () => ({ path: '/v2/products' }),
      expect: { customer: 200, admin: 200 },
      check: (res) => assert.ok(res.body.data.length > 0),
    },
    { name: 'POST /v2/products', method: 'POST', target: (_env, who) => ({ path: '/v2/products', body: body(who) }), expect: { customer: '403 FORBIDDEN', admin: 201 } },
    {
      name: 'GET /v2/products/{id}',
      method: 'GET',
      target: (env) => ({ path: `/v2/products/${env.product}` }),
      expect: { customer: 200, admin: 200 },
      check: (res, env) => assert.equal(res.body.id, env.product),
    },
    // Fresh products for the writes: the shared one stays active and priced for the order items.
    {
      name: 'PUT /v2/products/{id}',
      method: 'PUT',
      target: async (env, who) => ({ path: `/v2/products/${await env.fresh.product()}`, body: body(who) }),
      expect: { customer: '403 FORBIDDEN', admin: 200 },
      check: (res, _env, who) => assert.equal(res.body.name, `Product by ${who}`),
    },
    {
      name: 'PATCH /v2/products/{id}',
      method: 'PATCH',
      target: async (env) => ({ path: `/v2/products/${await env.fresh.product()}`, body: { name: 'Patched' } }),
      expect: { customer: '403 FORBIDDEN', admin: 200 },
      check: (res) => assert.equal(res.body.name, 'Patched'),
    },
    {
      name: 'DELETE /v2/products/{id}',
      method: 'DELETE',
      target: async (env) => ({ path: `/v2/products/${await env.fresh.product()}` }),
      expect: { customer: '403 FORBIDDEN', admin: 204 },
    },
  ];
}

function orderRows(): Row[] {
  const rows: Row[] = [
    {
      name: 'GET /v2/orders',
      method: 'GET',
      target: () => ({ path: '/v2/orders?limit=100' }),
      expect: { customer: 200, admin: 200 },
      check(res, env, who) {
        const list = ids(res);
        if (who === 'customer') {
          assert.ok(
            res.body.data.every((o: { user_id: string }) => o.user_id === env.alice.userId),
            JSON.stringify(res.body.data),
          );
          assert.ok(list.includes(env.aliceOrder) && !list.includes(env.bobOrder));
        } else assert.ok(list.includes(env.aliceOrder) && list.includes(env.bobOrder));
      },
    },
    {
      // A customer's order is its own by default; the admin names the user.
      name: 'POST /v2/orders',
      method: 'POST',
      target: (env, who) => ({ path: '/v2/orders', body: who === 'admin' ? { user_id: env.alice.userId } : {} }),
      expect: { customer: 201, admin: 201 },
      check(res, env) {
        assert.equal(res.body.user_id, env.alice.userId);
        assert.equal(res.body.status, 'pending');
      },
    },
    {
      // Another user's id in the body does not resolve for the customer: the body's fault (422), never an order for Bob.
      name: 'POST /v2/orders {user_id: other}',
      method: 'POST',
      target: (env) => ({ path: '/v2/orders', body: { user_id: env.bob.userId } }),
      expect: { customer: '422 VALIDATION_ERROR', admin: 201 },
      check: (res, env) => assert.equal(res.body.user_id, env.bob.userId),
    },
  ];
  for (const whose of ['own', 'other'] as const) {
    const key = (env: Env): string => pick(whose, env.alice.key, env.bob.key);
    const hidden: Outcome = '404 NOT_FOUND';
    rows.push(
      {
        name: `GET /v2/orders/{${whose}}`,
        method: 'GET',
        target: (env) => ({ path: `/v2/orders/${pick(whose, env.aliceOrder, env.bobOrder)}` }),
        expect: { customer: whose === 'own' ? 200 : hidden, admin: 200 },
        check: (res, env) => assert.equal(res.body.id, pick(whose, env.aliceOrder, env.bobOrder)),
      },
      {
        name: `PUT /v2/orders/{${whose}}`,
        method: 'PUT',
        target: async (env) => ({ path: `/v2/orders/${await env.fresh.order(key(env))}`, body: { status: 'pending' } }),
        expect: { customer: whose === 'own' ? '403 FORBIDDEN' : hidden, admin: 200 },
      },
      {
        name: `PATCH /v2/orders/{${whose}} {status: paid}`,
        method: 'PATCH',
        target: async (env) => ({ path: `/v2/orders/${await env.fresh.order(key(env))}`, body: { status: 'paid' } }),
        expect: { customer: whose === 'own' ? '403 FORBIDDEN' : hidden, admin: 200 },
        check: (res) => assert.equal(res.body.status, 'paid'),
      },
      {
        name: `DELETE /v2/orders/{${whose}}`,
        method: 'DELETE',
        target: async (env) => ({ path: `/v2/orders/${await env.fresh.order(key(env))}` }),
        expect: { customer: whose === 'own' ? '403 FORBIDDEN' : hidden, admin: 204 },
      },
    );
  }
  return rows;
}

function orderItemRows(): Row[] {
  const rows: Row[] = [
    {
      name: 'GET /v2/order-items',
      method: 'GET',
      target: () => ({ path: '/v2/order-items?limit=100' }),
      expect: { customer: 200, admin: 200 },
      check(res, env, who) {
        const list = ids(res);
        if (who === 'customer') assert.ok(list.includes(env.aliceItem) && !list.includes(env.bobItem), JSON.stringify(list));
        else assert.ok(list.includes(env.aliceItem) && list.includes(env.bobItem));
      },
    },
  ];
  for (const whose of ['own', 'other'] as const) {
    const key = (env: Env): string => pick(whose, env.alice.key, env.bob.key);
    const item = (env: Env): string => pick(whose, env.aliceItem, env.bobItem);
    const customer = (ok: Outcome): Outcome => (whose === 'own' ? ok : '404 NOT_FOUND');
    rows.push(
      {
        name: `POST /v2/order-items {order_id: ${whose}}`,
        method: 'POST',
        target: async (env) => ({ path: '/v2/order-items', body: { order_id: await env.fresh.order(key(env)), product_id: env.product, quantity: 2 } }),
        // Bob's order does not resolve for Alice: a body reference that names nothing visible is 422, as for POST /v2/orders.
        expect: { customer: whose === 'own' ? 201 : '422 VALIDATION_ERROR', admin: 201 },
        check: (res, env) => assert.equal(res.body.product_id, env.product),
      },
      {
        name: `GET /v2/order-items/{${whose}}`,
        method: 'GET',
        target: (env) => ({ path: `/v2/order-items/${item(env)}` }),
        expect: { customer: customer(200), admin: 200 },
        check: (res, env) => assert.equal(res.body.id, item(env)),
      },
      {
        name: `PUT /v2/order-items/{${whose}}`,
        method: 'PUT',
        target: (env) => ({ path: `/v2/order-items/${item(env)}`, body: { quantity: 2 } }),
        expect: { customer: customer(200), admin: 200 },
        check: (res) => assert.equal(res.body.quantity, 2),
      },
      {
        name: `PATCH /v2/order-items/{${whose}}`,
        method: 'PATCH',
        target: (env) => ({ path: `/v2/order-items/${item(env)}`, body: { quantity: 3 } }),
        expect: { customer: customer(200), admin: 200 },
        check: (res) => assert.equal(res.body.quantity, 3),
      },
      {
        name: `DELETE /v2/order-items/{${whose}}`,
        method: 'DELETE',
        target: async (env) => ({ path: `/v2/order-items/${await env.fresh.item(pick(whose, env.aliceOrder, env.bobOrder))}` }),
        expect: { customer: customer(204), admin: 204 },
      },
    );
  }
  return rows;
}

function reviewRows(): Row[] {
  const rows: Row[] = [
    {
      name: 'GET /v2/reviews',
      method: 'GET',
      target: () => ({ path: '/v2/reviews?limit=100' }),
      expect: { customer: 200, admin: 200 },
      check: (res, env) => assert.ok(ids(res).includes(env.aliceReview) && ids(res).includes(env.bobReview), JSON.stringify(ids(res))),
    },
    {
      name: 'GET /v2/reviews?item_id=',
      method: 'GET',
      target: (env) => ({ path: `/v2/reviews?item_id=${env.reviewed}` }),
      expect: { customer: 200, admin: 200 },
      // Reviews are public to any authenticated principal: Bob's too.
      check: (res, env) => assert.deepEqual(new Set(ids(res)), new Set([env.aliceReview, env.bobReview])),
    },
    {
      // The author is the caller; ADMIN_KEY is bound to no user, so it cannot write one (examples/commerce/reviews.ts).
      name: 'POST /v2/reviews',
      method: 'POST',
      target: (env) => ({ path: '/v2/reviews', body: { item_id: env.scratch, rating: 5, title: 'Matrix' } }),
      expect: { customer: 201, admin: '403 FORBIDDEN' },
      check: (res, env) => assert.equal(res.body.user_id, env.alice.userId),
    },
  ];
  for (const whose of ['own', 'other'] as const) {
    const review = (env: Env): string => pick(whose, env.aliceReview, env.bobReview);
    const change = (ok: Outcome): Outcome => (whose === 'own' ? ok : '403 FORBIDDEN');
    rows.push(
      {
        name: `GET /v2/reviews/{${whose}}`,
        method: 'GET',
        target: (env) => ({ path: `/v2/reviews/${review(env)}` }),
        expect: { customer: 200, admin: 200 },
        check: (res, env) => assert.equal(res.body.id, review(env)),
      },
      {
        name: `PUT /v2/reviews/{${whose}}`,
        method: 'PUT',
        target: (env, who) => ({ path: `/v2/reviews/${review(env)}`, body: { rating: 3, title: `Put by ${who}` } }),
        expect: { customer: change(200), admin: 200 },
        check: (res, _env, who) => {
          assert.equal(res.body.title, `Put by ${who}`);
          assert.equal(res.body.body, null);
        },
      },
      {
        name: `PATCH /v2/reviews/{${whose}}`,
        method: 'PATCH',
        target: (env, who) => ({ path: `/v2/reviews/${review(env)}`, body: { title: `Patched by ${who}` } }),
        expect: { customer: change(200), admin: 200 },
        check: (res, env, who) => {
          assert.equal(res.body.title, `Patched by ${who}`);
          assert.equal(res.body.user_id, pick(whose, env.alice.userId, env.bob.userId));
        },
      },
      {
        name: `DELETE /v2/reviews/{${whose}}`,
        method: 'DELETE',
        target: async (env) => ({ path: `/v2/reviews/${await env.fresh.review(pick(whose, env.alice.key, env.bob.key), env.scratch)}` }),
        expect: { customer: change(204), admin: 204 },
      },
    );
  }
  return rows;
}

/** api-keys and oauth-clients: admin-only, even a key bound to the customer itself. */
function platformRows(): Row[] {
  const keyRows: Row[] = [
    {
      name: 'GET /v2/api-keys',
      method: 'GET',
      target: () => ({ path: '/v2/api-keys' }),
      expect: { customer: '403 FORBIDDEN', admin: 200 },
      check: (res, env) => assert.ok(ids(res).includes(env.aliceKeyRecord)),
    },
    {
      name: 'POST /v2/api-keys',
      method: 'POST',
      target: (env) => ({ path: '/v2/api-keys', body: { name: 'matrix key', user_id: env.alice.userId } }),
      expect: { customer: '403 FORBIDDEN', admin: 201 },
      check: (res) => assert.match(res.body.key, /^ck_/),
    },
    {
      name: 'GET /v2/api-keys/{own}',
      method: 'GET',
      target: (env) => ({ path: `/v2/api-keys/${env.aliceKeyRecord}` }),
      expect: { customer: '403 FORBIDDEN', admin: 200 },
      check: (res, env) => {
        assert.equal(res.body.user_id, env.alice.userId);
        assert.equal(res.body.key, undefined);
      },
    },
    {
      name: 'PUT /v2/api-keys/{own}',
      method: 'PUT',
      target: async (env) => ({ path: `/v2/api-keys/${await env.fresh.apiKey(env.alice.userId)}`, body: { name: 'replaced', scopes: [] } }),
      expect: { customer: '403 FORBIDDEN', admin: 200 },
      check: (res) => assert.equal(res.body.name, 'replaced'),
    },
    {
      name: 'PATCH /v2/api-keys/{own}',
      method: 'PATCH',
      target: async (env) => ({ path: `/v2/api-keys/${await env.fresh.apiKey(env.alice.userId)}`, body: { name: 'patched' } }),
      expect: { customer: '403 FORBIDDEN', admin: 200 },
      check: (res) => assert.equal(res.body.name, 'patched'),
    },
    {
      name: 'DELETE /v2/api-keys/{own}',
      method: 'DELETE',
      target: async (env) => ({ path: `/v2/api-keys/${await env.fresh.apiKey(env.alice.userId)}` }),
      expect: { customer: '403 FORBIDDEN', admin: 204 },
    },
  ];
  const clientRows: Row[] = [
    {
      name: 'GET /v2/oauth-clients',
      method: 'GET',
      target: () => ({ path: '/v2/oauth-clients' }),
      expect: { customer: '403 FORBIDDEN', admin: 200 },
      check: (res, env) => assert.ok(ids(res).includes(env.client)),
    },
    {
      name: 'POST /v2/oauth-clients',
      method: 'POST',
      target: () => ({ path: '/v2/oauth-clients', body: { name: 'matrix client' } }),
      expect: { customer: '403 FORBIDDEN', admin: 201 },
      check: (res) => assert.match(res.body.client_secret, /^cs_/),
    },
    {
      name: 'GET /v2/oauth-clients/{id}',
      method: 'GET',
      target: (env) => ({ path: `/v2/oauth-clients/${env.client}` }),
      expect: { customer: '403 FORBIDDEN', admin: 200 },
      check: (res, env) => assert.equal(res.body.id, env.client),
    },
    {
      name: 'PUT /v2/oauth-clients/{id}',
      method: 'PUT',
      target: async (env) => ({ path: `/v2/oauth-clients/${await env.fresh.client()}`, body: { name: 'replaced', scopes: ['products:read'] } }),
      expect: { customer: '403 FORBIDDEN', admin: 200 },
      check: (res) => assert.deepEqual(res.body.scopes, ['products:read']),
    },
    {
      name: 'PATCH /v2/oauth-clients/{id}',
      method: 'PATCH',
      target: async (env) => ({ path: `/v2/oauth-clients/${await env.fresh.client()}`, body: { name: 'patched' } }),
      expect: { customer: '403 FORBIDDEN', admin: 200 },
      check: (res) => assert.equal(res.body.name, 'patched'),
    },
    {
      name: 'DELETE /v2/oauth-clients/{id}',
      method: 'DELETE',
      target: async (env) => ({ path: `/v2/oauth-clients/${await env.fresh.client()}` }),
      expect: { customer: '403 FORBIDDEN', admin: 204 },
    },
  ];
  return [...keyRows, ...clientRows];
}

function nestedRows(): Row[] {
  const rows: Row[] = [];
  for (const whose of ['own', 'other'] as const) {
    const customer = (ok: Outcome): Outcome => (whose === 'own' ? ok : '404 NOT_FOUND');
    const user = (env: Env): string => pick(whose, env.alice.userId, env.bob.userId);
    const order = (env: Env): string => pick(whose, env.aliceOrder, env.bobOrder);
    rows.push(
      {
        name: `GET /v2/users/{${whose}}/orders`,
        method: 'GET',
        target: (env) => ({ path: `/v2/users/${user(env)}/orders?limit=100` }),
        expect: { customer: customer(200), admin: 200 },
        check(res, env) {
          assert.ok(
            res.body.data.every((o: { user_id: string }) => o.user_id === user(env)),
            JSON.stringify(res.body.data),
          );
          assert.ok(ids(res).includes(order(env)));
        },
      },
      {
        name: `POST /v2/users/{${whose}}/orders`,
        method: 'POST',
        target: (env) => ({ path: `/v2/users/${user(env)}/orders`, body: {} }),
        expect: { customer: customer(201), admin: 201 },
        check: (res, env) => assert.equal(res.body.user_id, user(env)),
      },
      {
        name: `GET /v2/orders/{${whose}}/order-items`,
        method: 'GET',
        target: (env) => ({ path: `/v2/orders/${order(env)}/order-items?limit=100` }),
        expect: { customer: customer(200), admin: 200 },
        check(res, env) {
          assert.ok(
            res.body.data.every((i: { order_id: string }) => i.order_id === order(env)),
            JSON.stringify(res.body.data),
          );
          assert.ok(ids(res).includes(pick(whose, env.aliceItem, env.bobItem)));
        },
      },
      {
        name: `POST /v2/orders/{${whose}}/order-items`,
        method: 'POST',
        target: async (env) => ({
          path: `/v2/orders/${await env.fresh.order(pick(whose, env.alice.key, env.bob.key))}/order-items`,
          body: { product_id: env.product, quantity: 1 },
        }),
        expect: { customer: customer(201), admin: 201 },
        check: (res, env, _who, t) => {
          assert.equal(t.path, `/v2/orders/${res.body.order_id}/order-items`);
          assert.equal(res.body.product_id, env.product);
        },
      },
    );
  }
  return rows;
}

function actionRows(): Row[] {
  const rows: Row[] = [];
  for (const whose of ['own', 'other'] as const) {
    const key = (env: Env): string => pick(whose, env.alice.key, env.bob.key);
    const customer = (ok: Outcome): Outcome => (whose === 'own' ? ok : '404 NOT_FOUND');
    rows.push(
      {
        name: `POST /v2/orders/{${whose}}/cancel`,
        method: 'POST',
        async target(env) {
          const id = await env.fresh.order(key(env));
          return { path: `/v2/orders/${id}/cancel`, unchanged: `/v2/orders/${id}` };
        },
        expect: { customer: customer(200), admin: 200 },
        check: (res) => assert.equal(res.body.status, 'cancelled'),
      },
      {
        name: `GET /v2/orders/{${whose}, shipped}/tracking`,
        method: 'GET',
        target: (env) => ({ path: `/v2/orders/${pick(whose, env.aliceShipped, env.bobShipped)}/tracking` }),
        expect: { customer: customer(200), admin: 200 },
        check(res, env) {
          assert.equal(res.body.order_id, pick(whose, env.aliceShipped, env.bobShipped));
          assert.equal(res.body.status, 'in_transit');
          assert.match(res.body.tracking_number, /^CN[0-9A-F]{12}$/);
        },
      },
    );
  }
  rows.push(
    {
      // Only pending or paid orders can be cancelled (DESIGN §3): the state rule, for whoever may see the order.
      name: 'POST /v2/orders/{own, shipped}/cancel',
      method: 'POST',
      target: (env) => ({ path: `/v2/orders/${env.aliceShipped}/cancel`, unchanged: `/v2/orders/${env.aliceShipped}` }),
      expect: { customer: '409 INVALID_STATE', admin: '409 INVALID_STATE' },
    },
    {
      // Tracking exists only once shipped (DESIGN §3: "else 404").
      name: 'GET /v2/orders/{own, pending}/tracking',
      method: 'GET',
      target: (env) => ({ path: `/v2/orders/${env.aliceOrder}/tracking` }),
      expect: { customer: '404 NOT_FOUND', admin: '404 NOT_FOUND' },
    },
  );
  return rows;
}

function sessionRows(): Row[] {
  const loginWorks = async (res: Response, env: Env, email: string): Promise<void> => {
    const login = await env.server.request('POST', '/v2/sessions', { key: null, body: { email, password: NEW_PASSWORD } });
    assert.equal(login.status, 201, `login with the new password: ${login.status} ${login.text}`);
  };
  return [
    {
      // A fresh customer changes its own password (proving the current one); the admin may do the same on its behalf.
      name: 'PUT /v2/users/{own}/password',
      method: 'PUT',
      async target(env) {
        const c = await env.fresh.customer();
        return { path: `/v2/users/${c.userId}/password`, body: { current_password: PASSWORD, new_password: NEW_PASSWORD }, customerKey: c.key, unchanged: `/v2/users/${c.userId}` };
      },
      expect: { customer: 204, admin: 204 },
      check: async (res, env, _who, t) => {
        const user = await env.server.request('GET', t.path.replace(/\/password$/, ''));
        await loginWorks(res, env, user.body.email);
      },
    },
    {
      name: 'PUT /v2/users/{own}/password without current_password',
      method: 'PUT',
      async target(env) {
        const c = await env.fresh.customer();
        return { path: `/v2/users/${c.userId}/password`, body: { new_password: NEW_PASSWORD }, customerKey: c.key, unchanged: `/v2/users/${c.userId}` };
      },
      // Users changing their own password prove the current one (DESIGN §8); an admin resetting it does not.
      expect: { customer: '422 VALIDATION_ERROR', admin: 204 },
    },
    {
      name: 'PUT /v2/users/{other}/password',
      method: 'PUT',
      async target(env) {
        const u = await env.fresh.user();
        return { path: `/v2/users/${u.id}/password`, body: { new_password: NEW_PASSWORD }, unchanged: `/v2/users/${u.id}` };
      },
      expect: { customer: '404 NOT_FOUND', admin: 204 },
      check: async (res, env, _who, t) => {
        const user = await env.server.request('GET', t.path.replace(/\/password$/, ''));
        await loginWorks(res, env, user.body.email);
      },
    },
    {
      // A key-authenticated request has no session to show.
      name: 'GET /v2/sessions/current',
      method: 'GET',
      target: () => ({ path: '/v2/sessions/current' }),
      expect: { customer: '404 NOT_FOUND', admin: '404 NOT_FOUND' },
    },
  ];
}

const ROWS: Row[] = [...userRows(), ...productRows(), ...orderRows(), ...orderItemRows(), ...reviewRows(), ...platformRows(), ...nestedRows(), ...actionRows(), ...sessionRows()];

const ITEM_PATH = /^\/v2\/[a-z-]+\/[0-9a-f-]{36}$/;

function keyFor(env: Env, who: Who, t: Target): string | null {
  if (who === 'anonymous') return null;
  if (who === 'admin') return ADMIN_KEY;
  return t.customerKey ?? env.alice.key;
}

async function etagOf(server: TestServer, path: string): Promise<string> {
  const res = await server.request('GET', path);
  assert.equal(res.status, 200, `admin GET ${path}: ${res.status} ${res.text}`);
  return res.headers['etag'] ?? '';
}

async function run(env: Env, row: Row, who: Who, outcome: Outcome | typeof ANONYMOUS): Promise<void> {
  const t = await row.target(env, who);
  const unchanged = t.unchanged ?? (row.method !== 'GET' && row.method !== 'POST' && ITEM_PATH.test(t.path) ? t.path : undefined);
  const isError = typeof outcome === 'string';
  const before = isError && unchanged ? await etagOf(env.server, unchanged) : undefined;
  const res = await env.server.request(row.method, t.path, { key: keyFor(env, who, t), ...(t.body !== undefined ? { body: t.body } : {}) });
  if (isError) {
    const [status, code] = outcome.split(' ') as [string, string];
    expectError(res, Number(status), code);
    if (who === 'anonymous') assert.ok(res.headers['www-authenticate'], 'WWW-Authenticate missing on a 401');
    // A refused request changes nothing.
    if (unchanged) assert.equal(await etagOf(env.server, unchanged), before, `${unchanged} changed although the request was refused`);
    return;
  }
  assert.equal(res.status, outcome, `expected ${outcome}, got ${res.status} ${res.text}`);
  assert.ok(res.headers['x-request-id'], 'X-Request-Id header missing');
  if (outcome === 204) assert.equal(res.text, '', '204 with a body');
  if (outcome === 201) {
    assert.ok(res.body?.id, `201 without an id: ${res.text}`);
    assert.ok(res.headers['location']?.endsWith(`/${res.body.id}`), `Location ${res.headers['location']} does not name ${res.body.id}`);
  }
  if (row.method === 'DELETE' && outcome === 204) {
    expectError(await env.server.request('GET', t.path), 404, 'NOT_FOUND');
  }
  await row.check?.(res, env, who, t);
}

for (const mode of MODES) {
  describe(`permission matrix (${mode})`, () => {
    let env: Env;
    before(async () => {
      const server = await startServer(mode);
      try {
        env = await setup(server);
      } catch (err) {
        await server.close();
        throw err;
      }
    });
    after(async () => {
      await env?.server.close();
    });

    it('row names are unique', () => {
      const names = ROWS.map((r) => r.name);
      assert.equal(new Set(names).size, names.length, 'duplicate row names');
    });

    for (const row of ROWS) {
      for (const who of WHO) {
        const outcome = who === 'anonymous' ? ANONYMOUS : row.expect[who];
        it(`${who} ${row.name} → ${outcome}`, () => run(env, row, who, outcome as Outcome | typeof ANONYMOUS));
      }
    }
  });
}
