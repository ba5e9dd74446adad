// What the Prism test sends: every operation of one version's document, in that version's shapes, its success and the errors it documents that a client can provoke.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { expectError } from '../resources/expect.js';
import type { DocName, ProxyClient } from './proxy-client.js';

export const PASSWORD = 'long enough password';

/** Bodies in each version's own shapes (v1: `name`, `price_cents` + `currency`; v2: `full_name`, `price`). */
const SHAPES = {
  v1: {
    user: (email: string) => ({ email, name: 'Prism User', password: PASSWORD }),
    userReplace: (email: string) => ({ email, name: 'Prism Replaced' }),
    userPatch: { name: 'Prism Patched' },
    product: { name: 'Prism product', description: 'Proved by Prism', price_cents: 1250, currency: 'EUR', tags: ['prism'] },
    productPatch: { price_cents: 990 },
  },
  v2: {
    user: (email: string) => ({ email, full_name: 'Prism User', password: PASSWORD }),
    userReplace: (email: string) => ({ email, full_name: 'Prism Replaced' }),
    userPatch: { full_name: 'Prism Patched' },
    product: { name: 'Prism product', description: 'Proved by Prism', price: { amount: 1250, currency: 'EUR' }, tags: ['prism'] },
    productPatch: { price: { amount: 990, currency: 'EUR' } },
  },
} as const;

export interface Actors {
  customer: { userId: string; key: string };
}

/**
 * Create (201), list (200), read (200), read again with If-None-Match (304), merge-patch with the right If-Match
 * (200), the same with the now stale one (412), replace (200), then delete a second one (204) and read it (404).
 */
async function crud(c: ProxyClient, v: DocName, resource: string, bodies: { create: () => unknown; replace: () => unknown; patch: unknown }, key?: string): Promise<string> {
  const base = `/${v}/${resource}`;
  const made = await c.send(v, 'POST', base, { json: bodies.create(), expect: 201, key });
  const id = made.body.id as string;
  await c.send(v, 'GET', base, { expect: 200, key });
  const read = await c.send(v, 'GET', `${base}/${id}`, { expect: 200, key });
  const etag = read.headers.etag!;
  await c.send(v, 'GET', `${base}/${id}`, { headers: { 'if-none-match': etag }, expect: 304, key });
  await c.send(v, 'PATCH', `${base}/${id}`, { json: bodies.patch, headers: { 'content-type': 'application/merge-patch+json', 'if-match': etag }, expect: 200, key });
  expectError(await c.send(v, 'PATCH', `${base}/${id}`, { json: bodies.patch, headers: { 'if-match': etag }, expect: 412, key }), 412, 'PRECONDITION_FAILED');
  await c.send(v, 'PUT', `${base}/${id}`, { json: bodies.replace(), expect: 200, key });
  const doomed = await c.send(v, 'POST', base, { json: bodies.create(), expect: 201, key });
  await c.send(v, 'DELETE', `${base}/${doomed.body.id}`, { expect: 204, key });
  expectError(await c.send(v, 'GET', `${base}/${doomed.body.id}`, { expect: 404, key }), 404, 'NOT_FOUND');
  return id;
}

/** Users, products, their lists in every pagination style, and the errors any resource answers. */
export async function driveCatalogue(c: ProxyClient, v: DocName, actors: Actors): Promise<{ productId: string }> {
  const s = SHAPES[v];
  const email = () => `prism-${randomUUID()}@example.com`;
  const kept = email();
  const userId = await crud(c, v, 'users', { create: () => s.user(email()), replace: () => s.userReplace(kept), patch: s.userPatch });
  const productId = await crud(c, v, 'products', { create: () => s.product, replace: () => s.product, patch: s.productPatch });
  await c.send(v, 'GET', `/${v}/users/${userId}/orders`, { expect: 200 });

  await c.send(v, 'POST', `/${v}/products`, { json: s.product, expect: 201 });
  // Every pagination style of DESIGN §4, a sort, fields, search and filters with operators.
  const first = await c.send(v, 'GET', `/${v}/products?limit=1`, { expect: 200 });
  assert.ok(first.body.pagination.next_cursor, 'a second product exists, so there is a next cursor');
  await c.send(v, 'GET', `/${v}/products?limit=1&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`, { expect: 200 });
  await c.send(v, 'GET', `/${v}/products?offset=1&limit=5`, { expect: 200 });
  await c.send(v, 'GET', `/${v}/products?page=1&per_page=5`, { expect: 200 });
  const tokenPage = await c.send(v, 'GET', `/${v}/products?page_size=1`, { expect: 200 });
  if (tokenPage.body.next_page_token) await c.send(v, 'GET', `/${v}/products?page_size=1&page_token=${encodeURIComponent(tokenPage.body.next_page_token)}`, { expect: 200 });
  await c.send(v, 'GET', `/${v}/products?after_id=${productId}&limit=5`, { expect: 200 });
  await c.send(v, 'GET', `/${v}/products?sort=-created_at&fields=id,name&q=prism&status[in]=active,draft`, { expect: 200 });
  const amount = v === 'v1' ? 'price_cents' : 'price.amount';
  await c.send(v, 'GET', `/${v}/products?${amount}[gte]=1&${amount}[lt]=100000`, { expect: 200 });
  const list = await c.send(v, 'GET', `/${v}/products`, { expect: 200 });
  await c.send(v, 'GET', `/${v}/products`, { headers: { 'if-none-match': list.headers.etag! }, expect: 304 });

  // The errors every resource operation documents, each provoked the way a client would.
  expectError(await c.send(v, 'GET', `/${v}/products`, { key: 'ck_not_a_key_0123456789abcdefghijklmno', expect: 401 }), 401, 'UNAUTHENTICATED');
  expectError(await c.send(v, 'POST', `/${v}/products`, { key: actors.customer.key, json: s.product, expect: 403 }), 403, 'FORBIDDEN');
  expectError(await c.send(v, 'GET', `/${v}/products/${randomUUID()}`, { expect: 404 }), 404, 'NOT_FOUND');
  expectError(await c.send(v, 'GET', `/${v}/products?sort=no_such_field`, { expect: 400 }), 400, 'INVALID_QUERY');
  expectError(await c.send(v, 'GET', `/${v}/products?limit=500`, { expect: 400, invalid: true }), 400, 'INVALID_QUERY');
  expectError(await c.send(v, 'GET', `/${v}/products/not-a-uuid`, { expect: 400, invalid: true }), 400, 'BAD_REQUEST');
  expectError(await c.send(v, 'GET', `/${v}/products`, { headers: { accept: 'text/csv' }, expect: 406 }), 406, 'NOT_ACCEPTABLE');
  expectError(await c.send(v, 'POST', `/${v}/products`, { raw: 'name=x', headers: { 'content-type': 'text/plain' }, expect: 415, invalid: true }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  expectError(await c.send(v, 'POST', `/${v}/products`, { json: { name: 'No price' }, expect: 422, invalid: true }), 422, 'VALIDATION_ERROR');
  expectError(await c.send(v, 'POST', `/${v}/users`, { json: s.user(kept), expect: 409 }), 409, 'CONFLICT');
  return { productId };
}

/** Orders, their items (flat and nested), the asynchronous payment, tracking and cancel, with their 409s. */
export async function driveOrders(c: ProxyClient, v: DocName, actors: Actors, productId: string): Promise<void> {
  const orders = `/${v}/orders`;
  const order = (await c.send(v, 'POST', orders, { json: { user_id: actors.customer.userId }, expect: 201 })).body.id as string;
  await c.send(v, 'POST', `/${v}/users/${actors.customer.userId}/orders`, { json: {}, expect: 201 });
  await c.send(v, 'GET', orders, { expect: 200 });
  const read = await c.send(v, 'GET', `${orders}/${order}`, { expect: 200 });
  await c.send(v, 'GET', `${orders}/${order}`, { headers: { 'if-none-match': read.headers.etag! }, expect: 304 });
  await c.send(v, 'PATCH', `${orders}/${order}`, { json: {}, headers: { 'if-match': read.headers.etag! }, expect: 200 });
  await c.send(v, 'PUT', `${orders}/${order}`, { json: { status: 'pending' }, expect: 200 });

  // Items: created flat and under the order, read, changed, replaced, deleted.
  const item = (await c.send(v, 'POST', `/${v}/order-items`, { json: { order_id: order, product_id: productId, quantity: 2 }, expect: 201 })).body.id as string;
  await c.send(v, 'POST', `${orders}/${order}/order-items`, { json: { product_id: productId, quantity: 1 }, expect: 201 });
  await c.send(v, 'GET', `/${v}/order-items?order_id=${order}`, { expect: 200 });
  await c.send(v, 'GET', `${orders}/${order}/order-items`, { expect: 200 });
  const itemRead = await c.send(v, 'GET', `/${v}/order-items/${item}`, { expect: 200 });
  await c.send(v, 'GET', `/${v}/order-items/${item}`, { headers: { 'if-none-match': itemRead.headers.etag! }, expect: 304 });
  await c.send(v, 'PATCH', `/${v}/order-items/${item}`, { json: { quantity: 3 }, expect: 200 });
  await c.send(v, 'PUT', `/${v}/order-items/${item}`, { json: { quantity: 4 }, expect: 200 });
  const spare = (await c.send(v, 'POST', `/${v}/order-items`, { json: { order_id: order, product_id: productId, quantity: 1 }, expect: 201 })).body.id as string;
  await c.send(v, 'DELETE', `/${v}/order-items/${spare}`, { expect: 204 });

  // The asynchronous payment: 202 with Location, its state until it is done, then a second payment is 409.
  expectError(await c.send(v, 'GET', `${orders}/${order}/payment`, { key: actors.customer.key, expect: 404 }), 404, 'NOT_FOUND');
  const paid = await c.send(v, 'POST', `${orders}/${order}/payment`, { key: actors.customer.key, headers: { 'idempotency-key': randomUUID() }, expect: 202 });
  assert.equal(paid.headers.location, `${orders}/${order}/payment`);
  const deadline = Date.now() + 20_000;
  for (let i = 0; i < 400; i++) {
    const state = await c.send(v, 'GET', `${orders}/${order}/payment`, { key: actors.customer.key, expect: 200 });
    if (state.body.status !== 'processing') {
      assert.equal(state.body.status, 'succeeded', state.text);
      break;
    }
    assert.ok(Date.now() < deadline, 'the payment finished within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expectError(await c.send(v, 'POST', `${orders}/${order}/payment`, { key: actors.customer.key, expect: 409 }), 409, 'INVALID_STATE');
  // Tracking exists once shipped (404 before: a view outside its states), then cancelling is 409.
  expectError(await c.send(v, 'GET', `${orders}/${order}/tracking`, { expect: 404 }), 404, 'NOT_FOUND');
  await c.send(v, 'PATCH', `${orders}/${order}`, { json: { status: 'shipped' }, expect: 200 });
  await c.send(v, 'GET', `${orders}/${order}/tracking`, { key: actors.customer.key, expect: 200 });
  expectError(await c.send(v, 'POST', `${orders}/${order}/cancel`, { expect: 409 }), 409, 'INVALID_STATE');

  // Another order, cancelled by its owner; a third deleted.
  const other = (await c.send(v, 'POST', orders, { json: { user_id: actors.customer.userId }, expect: 201 })).body.id as string;
  await c.send(v, 'POST', `${orders}/${other}/cancel`, { key: actors.customer.key, expect: 200 });
  const doomed = (await c.send(v, 'POST', orders, { json: {}, expect: 201 })).body.id as string;
  await c.send(v, 'DELETE', `${orders}/${doomed}`, { expect: 204 });
}

/** Reviews (written by a user's key), API keys, OAuth clients, webhook endpoints and their deliveries. */
export async function drivePlatformResources(c: ProxyClient, v: DocName, actors: Actors, productId: string): Promise<void> {
  const key = actors.customer.key;
  await crud(
    c,
    v,
    'reviews',
    { create: () => ({ item_id: productId, rating: 5, title: 'Proved' }), replace: () => ({ rating: 4, title: 'Replaced' }), patch: { title: 'Patched' } },
    key,
  );
  await c.send(v, 'GET', `/${v}/reviews?item_id=${productId}&rating[gte]=1`, { key, expect: 200 });
  await crud(c, v, 'api-keys', {
    create: () => ({ name: 'Prism key', user_id: actors.customer.userId }),
    replace: () => ({ name: 'Prism key, replaced' }),
    patch: { name: 'Prism key, patched' },
  });
  await crud(c, v, 'oauth-clients', {
    create: () => ({ name: 'Prism client', scopes: ['products:read'] }),
    replace: () => ({ name: 'Prism client, replaced' }),
    patch: { name: 'Prism client, patched' },
  });
  // Loopback port 9 refuses: each delivery fails at its one attempt (webhookRetrySchedule '0'), so it can be retried.
  const url = 'https://127.0.0.1:9/prism';
  const endpoint = await crud(c, v, 'webhook-endpoints', {
    create: () => ({ url, events: ['product.*'] }),
    replace: () => ({ url, events: ['product.*'] }),
    patch: { description: 'Prism' },
  });
  await c.send(v, 'POST', `/${v}/webhook-endpoints/${endpoint}/rotate-secret`, { expect: 200 });
  // An event for the endpoint: a product change.
  await c.send(v, 'PATCH', `/${v}/products/${productId}`, { json: { name: 'Prism product, changed' }, expect: 200 });
  let failed: string | undefined;
  // A loaded machine delays the worker's poll: 30 s at most, one look per 100 ms.
  const deadline = Date.now() + 30_000;
  for (let i = 0; i < 300 && !failed; i++) {
    const list = await c.send(v, 'GET', `/${v}/webhook-endpoints/${endpoint}/webhook-deliveries?status=failed`, { expect: 200 });
    failed = list.body.data[0]?.id;
    if (!failed) {
      assert.ok(Date.now() < deadline, 'a delivery failed within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await c.send(v, 'GET', `/${v}/webhook-deliveries?status=failed`, { expect: 200 });
  await c.send(v, 'GET', `/${v}/webhook-deliveries/${failed}`, { expect: 200 });
  const retried = await c.send(v, 'POST', `/${v}/webhook-deliveries/${failed}/retry`, { expect: 202 });
  assert.equal(retried.headers.location, `/${v}/webhook-deliveries/${failed}`);
}
