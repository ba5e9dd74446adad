// Idempotency-Key on a request carrying mutations (issue 29.3, DESIGN §11): all of them applied together once, the whole response replayed, a failure rolling back all, reuse and concurrency refused, and a replay authorized like any request.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createProduct, errorShape, MODES, startServer, type TestServer } from '../../support/harness.js';
import { gql, onlyError } from './support.js';

const CREATE = 'mutation ($input: ProductCreateInput!) { createProduct(input: $input) { id name price { amount } reviews { id } } }';

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`GraphQL mutations under an Idempotency-Key (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode, { worker: 'off' });
    });
    after(async () => server.close());

    const keyed = (key: string, query: string, variables?: Record<string, unknown>, apiKey?: string) =>
      server.request('POST', '/graphql', { ...(apiKey ? { key: apiKey } : {}), body: { query, ...(variables ? { variables } : {}) }, headers: { 'idempotency-key': key } });
    const named = async (name: string): Promise<number> =>
      (await server.request('GET', `/v2/products?limit=100&q=${encodeURIComponent(name)}`)).body.data.filter((p: { name: string }) => p.name === name).length;

    it('a repeat gets the first response, byte for byte, with Idempotent-Replayed, and creates nothing more', async () => {
      const key = randomUUID();
      const variables = { input: { name: 'Keyed once', price: { amount: 700, currency: 'EUR' } } };
      const first = await keyed(key, CREATE, variables);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      const again = await keyed(key, CREATE, variables);
      assert.equal(again.text, first.text);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(await named('Keyed once'), 1);
      const events = (await server.request('GET', '/events?type=product.created&limit=100')).body.data.filter(
        (e: { data: { object: { id: string } } }) => e.data.object.id === first.body.data.createProduct.id,
      );
      assert.equal(events.length, 1, 'one event: one side effect');
    });

    it('the stored response is the whole answer, its relations read inside the change: an item with its order’s new total', async () => {
      const product = await createProduct(server, { price: { amount: 450, currency: 'EUR' } });
      const order = await server.request('POST', '/v2/orders', { body: {} });
      const query =
        'mutation ($o: ID!, $p: ID!) { createOrderItem(input: { orderId: $o, productId: $p, quantity: 2 }) { id order { total { amount } itemsConnection { totalCount } } } }';
      const key = randomUUID();
      const first = await keyed(key, query, { o: order.body.id, p: product.id });
      assert.equal(first.body.data.createOrderItem.order.total.amount, 900, first.text);
      assert.equal(first.body.data.createOrderItem.order.itemsConnection.totalCount, 1);
      // The order changes after; the replay is the response as it was.
      await server.request('POST', `/v2/orders/${order.body.id}/order-items`, { body: { product_id: product.id, quantity: 1 } });
      const again = await keyed(key, query, { o: order.body.id, p: product.id });
      assert.equal(again.text, first.text);
      assert.equal((await server.request('GET', `/v2/orders/${order.body.id}`)).body.total.amount, 1350);
    });

    it('the same key with other variables, another operation or from REST is IDEMPOTENCY_KEY_REUSED, and nothing runs', async () => {
      const key = randomUUID();
      await keyed(key, CREATE, { input: { name: 'Reused A', price: { amount: 1, currency: 'EUR' } } });
      const other = await keyed(key, CREATE, { input: { name: 'Reused B', price: { amount: 1, currency: 'EUR' } } });
      assert.equal(other.status, 200);
      assert.equal(other.body.errors[0].extensions.code, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(await named('Reused B'), 0);
      const restKey = randomUUID();
      assert.equal(
        (await server.request('POST', '/v2/products', { body: { name: 'Reused C', price: { amount: 1, currency: 'EUR' } }, headers: { 'idempotency-key': restKey } })).status,
        201,
      );
      const crossed = await keyed(restKey, CREATE, { input: { name: 'Reused C', price: { amount: 1, currency: 'EUR' } } });
      assert.equal(crossed.body.errors[0].extensions.code, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(await named('Reused C'), 1);
    });

    it('a refused change is not stored: the key serves the corrected request', async () => {
      const key = randomUUID();
      const invalid = await keyed(key, CREATE, { input: { name: 'Fixed later' } });
      assert.equal(invalid.body.errors[0].extensions.code, 'VALIDATION_ERROR');
      const fixed = await keyed(key, 'mutation { createProduct(input: { name: "Fixed later", price: { amount: 5, currency: "EUR" } }) { id } }');
      assert.ok(fixed.body.data?.createProduct?.id, fixed.text);
      assert.equal(await named('Fixed later'), 1);
    });

    const eventsOf = async (type: string, id: string): Promise<number> =>
      (await server.request('GET', `/events?type=${type}&limit=100`)).body.data.filter((e: { data: { object: { id: string } } }) => e.data.object.id === id).length;

    it('several mutations under one key: applied together once, the whole answer replayed, each event written once', async () => {
      const product = await createProduct(server, { name: 'Batch target' });
      const query = `mutation ($name: String!) {
        a: createProduct(input: { name: $name, price: { amount: 300, currency: "EUR" } }) { id name }
        b: updateProduct(id: "${product.id}", input: { name: "Batch target renamed" }) { id name etag }
        c: createProduct(input: { name: "Batch third", price: { amount: 301, currency: "EUR" } }) { id }
      }`;
      const key = randomUUID();
      const first = await keyed(key, query, { name: 'Batch first' });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.errors, undefined, first.text);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      assert.equal(first.body.data.b.name, 'Batch target renamed');
      const again = await keyed(key, query, { name: 'Batch first' });
      assert.equal(again.status, 200);
      assert.equal(again.text, first.text, 'the whole answer, byte for byte');
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(await named('Batch first'), 1);
      assert.equal(await named('Batch third'), 1);
      assert.equal(await eventsOf('product.created', first.body.data.a.id), 1);
      assert.equal(await eventsOf('product.created', first.body.data.c.id), 1);
      assert.equal(await eventsOf('product.updated', product.id as string), 1, 'the update ran once');
      // The same operation and variables in another order of keys is the same request; other variables are another.
      const reused = await keyed(key, query, { name: 'Batch other' });
      assert.equal(reused.body.errors[0].extensions.code, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(reused.body.data, undefined, 'refused as a whole: nothing ran');
      assert.equal(await named('Batch other'), 0);
    });

    it('a failed mutation rolls back the ones before it: data null, nothing written, no record (the key serves the corrected request)', async () => {
      const order = await server.request('POST', '/v2/orders', { body: {} });
      assert.equal((await server.request('POST', `/v2/orders/${order.body.id}/cancel`, { body: {} })).status, 200);
      const product = await createProduct(server, { name: 'Rollback target' });
      const query = (orderId: string) => `mutation {
        a: createProduct(input: { name: "Rolled back", price: { amount: 5, currency: "EUR" } }) { id }
        b: updateProduct(id: "${product.id}", input: { name: "Rollback renamed" }) { name }
        c: cancelOrder(id: "${orderId}") { status }
        d: createProduct(input: { name: "Never reached", price: { amount: 5, currency: "EUR" } }) { id }
      }`;
      const key = randomUUID();
      const failed = await keyed(key, query(order.body.id));
      assert.equal(failed.status, 200, failed.text);
      assert.equal(failed.body.data, null, 'nothing of it was applied');
      assert.deepEqual(
        failed.body.errors.map((e: { path: string[]; extensions: { code: string } }) => [e.path, e.extensions.code]),
        [[['c'], 'INVALID_STATE']],
      );
      assert.equal(await named('Rolled back'), 0, 'the first mutation was rolled back');
      assert.equal(await named('Never reached'), 0, 'the one after the failure never ran');
      assert.equal((await server.request('GET', `/v2/products/${product.id}`)).body.name, 'Rollback target');
      assert.equal(await eventsOf('product.updated', product.id as string), 0, 'no event of the rolled-back update');
      // Sent again, it fails again (no record replays a failure); corrected, the key runs it once.
      const repeat = await keyed(key, query(order.body.id));
      assert.equal(repeat.text, failed.text);
      assert.equal(repeat.headers['idempotent-replayed'], undefined);
      const open = await server.request('POST', '/v2/orders', { body: {} });
      const fixed = await keyed(key, query(open.body.id));
      assert.equal(fixed.body.errors, undefined, fixed.text);
      assert.equal(fixed.body.data.c.status, 'cancelled');
      assert.equal(await named('Rolled back'), 1);
      assert.equal(await named('Never reached'), 1);
      assert.equal((await keyed(key, query(open.body.id))).headers['idempotent-replayed'], 'true');
      assert.equal(await named('Rolled back'), 1);
    });

    it('concurrent requests under one key: one runs, the others replay its answer or are 409 IDEMPOTENCY_KEY_IN_USE', async () => {
      const key = randomUUID();
      const query = `mutation {
        a: createProduct(input: { name: "Concurrent A", price: { amount: 1, currency: "EUR" } }) { id }
        b: createProduct(input: { name: "Concurrent B", price: { amount: 1, currency: "EUR" } }) { id }
      }`;
      const results = await Promise.all(
        Array.from({ length: 12 }, () => server.request('POST', '/graphql', { body: { query }, headers: { 'idempotency-key': key, accept: 'application/graphql-response+json' } })),
      );
      const fresh = results.filter((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined);
      assert.equal(fresh.length, 1, results.map((r) => `${r.status} ${r.text}`).join('\n'));
      for (const r of results) {
        if (r === fresh[0]) continue;
        if (r.status === 409) {
          assert.deepEqual(
            r.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code),
            ['IDEMPOTENCY_KEY_IN_USE'],
          );
          assert.equal(r.body.data, undefined);
          assert.equal(r.headers['retry-after'], '1');
        } else {
          assert.equal(r.status, 200, r.text);
          assert.equal(r.headers['idempotent-replayed'], 'true');
          assert.equal(r.text, fresh[0]!.text);
        }
      }
      assert.equal(await named('Concurrent A'), 1);
      assert.equal(await named('Concurrent B'), 1);
    });

    it('a key refusal is the request’s status under application/graphql-response+json: 422 for another request under the key', async () => {
      const key = randomUUID();
      const make = (name: string) =>
        `mutation { a: createProduct(input: { name: "${name}", price: { amount: 1, currency: "EUR" } }) { id } b: createProduct(input: { name: "${name} 2", price: { amount: 1, currency: "EUR" } }) { id } }`;
      const headers = { 'idempotency-key': key, accept: 'application/graphql-response+json' };
      assert.equal((await server.request('POST', '/graphql', { body: { query: make('Media A') }, headers })).status, 200);
      const other = await server.request('POST', '/graphql', { body: { query: make('Media B') }, headers });
      assert.equal(other.status, 422, other.text);
      assert.equal(other.body.errors[0].extensions.code, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(await named('Media B'), 0);
    });

    it('a query ignores the key; a malformed key is 400', async () => {
      const query = await keyed(randomUUID(), '{ products(first: 1) { edges { node { id } } } }');
      assert.equal(query.status, 200);
      assert.equal(query.headers['idempotent-replayed'], undefined);
      const malformed = await keyed('x'.repeat(300), CREATE, { input: { name: 'Never', price: { amount: 1, currency: 'EUR' } } });
      assert.equal(malformed.status, 400);
      assert.equal(errorShape(malformed).code, 'BAD_REQUEST');
    });

    it('every kind of mutation: an update, a delete and an action replay their first answers', async () => {
      const product = await createProduct(server, { name: 'Kinds' });
      const key1 = randomUUID();
      const update = `mutation { updateProduct(id: "${product.id}", input: { name: "Kinds renamed" }) { name updatedAt } }`;
      const updated = await keyed(key1, update);
      assert.equal(updated.body.data.updateProduct.name, 'Kinds renamed');
      assert.equal((await keyed(key1, update)).text, updated.text);
      const order = await server.request('POST', '/v2/orders', { body: {} });
      const key2 = randomUUID();
      const cancel = `mutation { cancelOrder(id: "${order.body.id}") { status } }`;
      const cancelled = await keyed(key2, cancel);
      assert.equal(cancelled.body.data.cancelOrder.status, 'cancelled');
      const replay = await keyed(key2, cancel);
      assert.equal(replay.text, cancelled.text, 'replayed rather than INVALID_STATE');
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      const key3 = randomUUID();
      const remove = `mutation { deleteProduct(id: "${product.id}") }`;
      const removed = await keyed(key3, remove);
      assert.equal(removed.body.data?.deleteProduct, product.id, removed.text);
      const removedAgain = await keyed(key3, remove);
      assert.equal(removedAgain.body.data.deleteProduct, product.id, 'replayed rather than NOT_FOUND');
      onlyError(await gql(server, remove), 'NOT_FOUND');
    });

    it('a replay is authorized like any request: a narrowed key of the same user gets INSUFFICIENT_SCOPE, never the stored secret', async () => {
      const user = await server.request('POST', '/v2/users', {
        body: { email: `keyed-${randomUUID()}@example.com`, full_name: 'Keyed admin', password: 'long enough password', role: 'admin' },
      });
      const wide = (await server.request('POST', '/v2/api-keys', { body: { name: 'wide', user_id: user.body.id } })).body.key as string;
      const narrow = (await server.request('POST', '/v2/api-keys', { body: { name: 'narrow', user_id: user.body.id, scopes: ['products:read'] } })).body.key as string;
      const mint = 'mutation { createApiKey(input: { name: "minted" }) { id key } }';
      const key = randomUUID();
      const first = await keyed(key, mint, undefined, wide);
      assert.match(first.body.data.createApiKey.key, /^ck_/);
      const replayed = await keyed(key, mint, undefined, narrow);
      assert.equal(replayed.body.errors[0].extensions.code, 'INSUFFICIENT_SCOPE');
      assert.equal(replayed.headers['idempotent-replayed'], undefined);
      assert.ok(!replayed.text.includes(first.body.data.createApiKey.key), 'the secret is not in the answer');
      const mine = await keyed(key, mint, undefined, wide);
      assert.equal(mine.text, first.text, 'the key’s own credential gets the secret again, as REST replays it');
      assert.equal(mine.headers['idempotent-replayed'], 'true');
    });
  });
}
