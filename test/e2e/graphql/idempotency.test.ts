// Idempotency-Key on a request carrying a mutation (issue 29.3, DESIGN §11): the whole response replayed, one side effect, reuse refused, and a replay authorized like any request.
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

    it('a key covers one mutation; a query ignores it; a malformed key is 400', async () => {
      const two = await keyed(
        randomUUID(),
        'mutation { a: createProduct(input: { name: "Two A", price: { amount: 1, currency: "EUR" } }) { id } b: deleteProduct(id: "00000000-0000-7000-8000-000000000000") }',
      );
      assert.equal(two.body.errors[0].extensions.code, 'BAD_REQUEST');
      assert.equal(two.body.data, undefined);
      assert.equal(await named('Two A'), 0);
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
