// GraphQL's `etag`, `ifMatch` and `replaceX` as REST's ETag, If-Match and PUT, and GET actions as fields (`order.tracking`, `order.payment`) as REST's bodies, on both stores with graphql-request (issue 29).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCustomer, createProduct, MODES, startServer, type TestServer } from '../../support/harness.js';
import { asGraphql, data, FIELDS, gql, onlyError } from './support.js';

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`GraphQL conditional changes and action views (${mode})`, () => {
    let server: TestServer;
    let customer: { userId: string; key: string };
    before(async () => {
      // No worker: a payment stays `processing`, so REST and GraphQL read the same operation.
      server = await startServer(mode, { worker: 'off' });
      customer = await createCustomer(server, 'gql-conditional@example.com');
    });
    after(async () => server.close());

    const updatedEvents = async (id: string): Promise<number> =>
      (await server.request('GET', '/events?type=product.updated&limit=100')).body.data.filter((e: { data: { object: { id: string } } }) => e.data.object.id === id).length;

    it('`etag` is REST’s ETag for the same caller, before and after a change', async () => {
      const product = await createProduct(server, { name: 'Etag parity' });
      const order = await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
      for (const [path, field, id, key] of [
        [`/v2/products/${product.id}`, 'product', product.id, undefined],
        [`/v2/products/${product.id}`, 'product', product.id, customer.key],
        [`/v2/orders/${order.body.id}`, 'order', order.body.id, undefined],
        [`/v2/orders/${order.body.id}`, 'order', order.body.id, customer.key],
      ] as Array<[string, string, string, string | undefined]>) {
        const rest = await server.request('GET', path, key ? { key } : {});
        const got = await data(server, `query ($id: ID!) { ${field}(id: $id) { etag } }`, { id }, key ? { key } : {});
        assert.equal(got[field].etag, rest.headers.etag, `${path} as ${key ? 'customer' : 'admin'}`);
      }
      const changed = await data(server, `mutation { updateProduct(id: "${product.id}", input: { name: "Etag parity 2" }) { etag } }`);
      assert.equal(changed.updateProduct.etag, (await server.request('GET', `/v2/products/${product.id}`)).headers.etag);
    });

    it('ifMatch: a stale etag is PRECONDITION_FAILED and nothing is written (update, replace, delete); the current one goes through', async () => {
      const product = await createProduct(server, { name: 'If-Match', tags: ['kept'] });
      const stale = (await server.request('GET', `/v2/products/${product.id}`)).headers.etag as string;
      await server.request('PATCH', `/v2/products/${product.id}`, { body: { name: 'If-Match moved' } });
      const before = await server.request('GET', `/v2/products/${product.id}`);
      const eventsBefore = await updatedEvents(product.id as string);
      const refused = [
        `mutation ($m: String) { updateProduct(id: "${product.id}", input: { name: "Stale patch" }, ifMatch: $m) { id } }`,
        `mutation ($m: String) { replaceProduct(id: "${product.id}", input: { name: "Stale put", price: { amount: 1, currency: "EUR" } }, ifMatch: $m) { id } }`,
        `mutation ($m: String) { deleteProduct(id: "${product.id}", ifMatch: $m) }`,
      ];
      for (const query of refused) {
        const res = await gql(server, query, { m: stale });
        assert.equal(res.status, 200);
        assert.equal(res.data, null, query);
        onlyError(res, 'PRECONDITION_FAILED');
      }
      const now = await server.request('GET', `/v2/products/${product.id}`);
      assert.deepEqual(now.body, before.body, 'nothing written');
      assert.equal(await updatedEvents(product.id as string), eventsBefore, 'no event');
      // The ETag as REST sent it, a list holding it, or `*`: the change is made.
      const current = before.headers.etag as string;
      const patched = await data(server, refused[0]!, { m: `"nope", ${current}` });
      assert.equal(patched.updateProduct.id, product.id);
      assert.equal((await server.request('GET', `/v2/products/${product.id}`)).body.name, 'Stale patch');
      // REST takes GraphQL's etag as If-Match.
      const etag = (await data(server, `{ product(id: "${product.id}") { etag } }`)).product.etag as string;
      assert.equal((await server.request('PATCH', `/v2/products/${product.id}`, { body: { name: 'By REST' }, headers: { 'if-match': etag } })).status, 200);
      assert.equal((await data(server, refused[2]!, { m: '*' })).deleteProduct, product.id);
      assert.equal((await server.request('GET', `/v2/products/${product.id}`)).status, 404);
    });

    it('replaceX is REST’s PUT: fields left out take their defaults or are removed, the answer equals REST’s object', async () => {
      const product = await createProduct(server, { name: 'Replace me', description: 'goes away', tags: ['a', 'b'], status: 'draft' });
      const res = await data(
        server,
        `mutation ($id: ID!) { replaceProduct(id: $id, input: { name: "Replaced", price: { amount: 250, currency: "EUR" } }) { ${FIELDS.products} } }`,
        { id: product.id },
      );
      const rest = await server.request('GET', `/v2/products/${product.id}`);
      assert.deepEqual(res.replaceProduct, asGraphql(rest.body));
      assert.equal(rest.body.name, 'Replaced');
      assert.equal(rest.body.description, null, 'left out: removed');
      assert.deepEqual(rest.body.tags, [], 'left out: its default');
      assert.equal(rest.body.status, 'active', 'left out: its default');
      // A replacement missing a required field is REST's 422, field by field.
      const invalid = await gql(server, `mutation { replaceProduct(id: "${product.id}", input: { name: "No price" }) { id } }`);
      assert.deepEqual(
        onlyError(invalid, 'VALIDATION_ERROR').extensions.details?.map((d) => d.field),
        ['price'],
      );
    });

    it('order.tracking and order.payment are REST’s GET action bodies, null where REST is 404, under the same visibility', async () => {
      const product = await createProduct(server, { price: { amount: 700, currency: 'EUR' } });
      const order = (await server.request('POST', '/v2/orders', { key: customer.key, body: {} })).body;
      await server.request('POST', `/v2/orders/${order.id}/order-items`, { key: customer.key, body: { product_id: product.id, quantity: 1 } });
      const query = `query ($id: ID!) { order(id: $id) { status tracking payment { status error createdAt updatedAt } } }`;
      const fresh = (await data(server, query, { id: order.id }, { key: customer.key })).order;
      assert.deepEqual([fresh.tracking, fresh.payment], [null, null]);
      assert.equal((await server.request('GET', `/v2/orders/${order.id}/tracking`, { key: customer.key })).status, 404);
      assert.equal((await server.request('GET', `/v2/orders/${order.id}/payment`, { key: customer.key })).status, 404);

      await data(server, 'mutation ($id: ID!) { payOrder(id: $id) { status } }', { id: order.id }, { key: customer.key });
      const restPayment = await server.request('GET', `/v2/orders/${order.id}/payment`, { key: customer.key });
      assert.equal(restPayment.status, 200);
      const paying = (await data(server, query, { id: order.id }, { key: customer.key })).order;
      assert.deepEqual(paying.payment, { error: null, ...asGraphql(restPayment.body) });

      // Shipped by an admin (no worker runs the payment here): the order leaves the payment's hold first.
      const shipped = await createShippedOrder();
      const restTracking = await server.request('GET', `/v2/orders/${shipped}/tracking`, { key: customer.key });
      assert.equal(restTracking.status, 200, restTracking.text);
      const tracked = (await data(server, query, { id: shipped }, { key: customer.key })).order;
      assert.deepEqual(tracked.tracking, asGraphql(restTracking.body));
      assert.equal(tracked.tracking.carrier, 'Canon Post');

      // A keyed request's answer reads its views inside its own transaction: the tracking of the order it ships.
      const paid = await createShippedOrder(['paid']);
      const keyed = await server.request('POST', '/graphql', {
        body: {
          query: `mutation { a: updateOrder(id: "${paid}", input: { status: shipped }) { status tracking } b: createProduct(input: { name: "Shipped with", price: { amount: 1, currency: "EUR" } }) { id } }`,
        },
        headers: { 'idempotency-key': `ship-${paid}` },
      });
      assert.equal(keyed.body.data?.a.status, 'shipped', keyed.text);
      assert.deepEqual(keyed.body.data.a.tracking, asGraphql((await server.request('GET', `/v2/orders/${paid}/tracking`)).body));

      // Another customer sees neither the order nor, through it, its views.
      const other = await createCustomer(server, 'gql-conditional-other@example.com');
      onlyError(await gql(server, query, { id: shipped }, { key: other.key }), 'NOT_FOUND');
      assert.equal((await server.request('GET', `/v2/orders/${shipped}/tracking`, { key: other.key })).status, 404);
    });

    /** An order of the customer, moved by the admin through REST (pending → paid → shipped by default). */
    async function createShippedOrder(states = ['paid', 'shipped']): Promise<string> {
      const order = (await server.request('POST', '/v2/orders', { key: customer.key, body: {} })).body;
      for (const status of states) {
        const res = await server.request('PATCH', `/v2/orders/${order.id}`, { body: { status } });
        assert.equal(res.status, 200, res.text);
      }
      return order.id as string;
    }
  });
}
