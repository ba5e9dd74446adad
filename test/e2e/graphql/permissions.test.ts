// REST's permission matrix replayed in GraphQL (issue 29.3): the same principal, scopes, role and ownership, through relations too; a customer never sees another's order.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCustomer, createProduct, MODES, startServer, type TestServer } from '../../support/harness.js';
import { data, gql, onlyError } from './support.js';

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`GraphQL permissions as REST's (${mode})`, () => {
    let server: TestServer;
    let ann: { userId: string; key: string };
    let ben: { userId: string; key: string };
    let productId: string;
    let annOrder: string;
    let benOrder: string;
    let benItem: string;
    let benReview: string;

    before(async () => {
      server = await startServer(mode);
      ann = await createCustomer(server, 'gql-ann@example.com');
      ben = await createCustomer(server, 'gql-ben@example.com');
      productId = (await createProduct(server)).id as string;
      annOrder = (await server.request('POST', '/v2/orders', { key: ann.key, body: {} })).body.id;
      benOrder = (await server.request('POST', '/v2/orders', { key: ben.key, body: {} })).body.id;
      await server.request('POST', `/v2/orders/${annOrder}/order-items`, { key: ann.key, body: { product_id: productId, quantity: 1 } });
      benItem = (await server.request('POST', `/v2/orders/${benOrder}/order-items`, { key: ben.key, body: { product_id: productId, quantity: 2 } })).body.id;
      benReview = (await server.request('POST', '/v2/reviews', { key: ben.key, body: { item_id: productId, rating: 3, title: 'Ben says' } })).body.id;
    });
    after(async () => server.close());

    it('another customer’s order, item and user are NOT_FOUND, as REST’s 404', async () => {
      for (const [field, id, path] of [
        ['order', benOrder, `/v2/orders/${benOrder}`],
        ['orderItem', benItem, `/v2/order-items/${benItem}`],
        ['user', ben.userId, `/v2/users/${ben.userId}`],
      ] as const) {
        const rest = await server.request('GET', path, { key: ann.key });
        assert.equal(rest.status, 404, path);
        const res = await gql(server, `query ($id: ID!) { ${field}(id: $id) { id } }`, { id }, { key: ann.key });
        assert.equal(onlyError(res, 'NOT_FOUND').message, rest.body.error.message);
        assert.deepEqual(res.data, { [field]: null });
      }
      // Ben's own are his.
      assert.equal((await data(server, 'query ($id: ID!) { order(id: $id) { id } }', { id: benOrder }, { key: ben.key })).order.id, benOrder);
    });

    it('collections hold only the caller’s own, as REST’s do', async () => {
      for (const [field, path] of [
        ['orders', '/v2/orders'],
        ['orderItems', '/v2/order-items'],
      ] as const) {
        const rest = (await server.request('GET', `${path}?limit=100`, { key: ann.key })).body.data.map((o: { id: string }) => o.id);
        const got = (await data(server, `{ ${field}(first: 100) { edges { node { id } } } }`, undefined, { key: ann.key }))[field].edges.map(
          (e: { node: { id: string } }) => e.node.id,
        );
        assert.deepEqual(got, rest, field);
        assert.ok(!got.includes(benOrder) && !got.includes(benItem));
      }
      const all = (await data(server, '{ orders(first: 100) { edges { node { id } } } }')).orders.edges.map((e: { node: { id: string } }) => e.node.id);
      assert.ok(all.includes(annOrder) && all.includes(benOrder), 'an admin sees every order');
    });

    it('through relations too: another’s user is null, a product’s items are the caller’s own', async () => {
      const review = (await data(server, 'query ($id: ID!) { review(id: $id) { id user { id } item { id } } }', { id: benReview }, { key: ann.key })).review;
      assert.equal(review.user, null, 'reviews are public, their authors are not');
      assert.equal(review.item.id, productId);
      assert.equal((await server.request('GET', `/v2/users/${ben.userId}`, { key: ann.key })).status, 404);
      const items = (
        await data(server, 'query ($id: ID!) { product(id: $id) { orderItems { id orderId } orderItemsConnection { totalCount } } }', { id: productId }, { key: ann.key })
      ).product;
      assert.deepEqual(
        items.orderItems.map((i: { orderId: string }) => i.orderId),
        [annOrder],
      );
      assert.equal(items.orderItemsConnection.totalCount, 1, 'counted among the caller’s own only');
      const rest = (await server.request('GET', `/v2/order-items?product_id=${productId}`, { key: ann.key })).body.data;
      assert.equal(rest.length, 1);
      // An item's order, through the item: the caller's own only (another's order is not reachable through its item either).
      const mine = (await data(server, '{ orderItems { edges { node { order { id user { id } } } } } }', undefined, { key: ann.key })).orderItems.edges;
      assert.deepEqual(
        mine.map((e: { node: { order: { id: string; user: { id: string } } } }) => [e.node.order.id, e.node.order.user.id]),
        [[annOrder, ann.userId]],
      );
      const admin = (await data(server, 'query ($id: ID!) { product(id: $id) { orderItems { orderId } } }', { id: productId })).product.orderItems;
      assert.equal(admin.length, 2);
    });

    it('writes a customer may not make are FORBIDDEN, and another’s objects NOT_FOUND, as REST answers', async () => {
      const cases: Array<[string, Record<string, unknown>, string, string, unknown]> = [
        [
          'mutation { createProduct(input: { name: "x", price: { amount: 1, currency: "EUR" } }) { id } }',
          {},
          'POST',
          '/v2/products',
          { name: 'x', price: { amount: 1, currency: 'EUR' } },
        ],
        ['mutation ($id: ID!) { updateOrder(id: $id, input: { status: paid }) { id } }', { id: annOrder }, 'PATCH', `/v2/orders/${annOrder}`, { status: 'paid' }],
        ['mutation ($id: ID!) { deleteOrder(id: $id) }', { id: annOrder }, 'DELETE', `/v2/orders/${annOrder}`, undefined],
        ['mutation ($id: ID!) { cancelOrder(id: $id) { id } }', { id: benOrder }, 'POST', `/v2/orders/${benOrder}/cancel`, {}],
        ['mutation ($id: ID!) { updateOrderItem(id: $id, input: { quantity: 9 }) { id } }', { id: benItem }, 'PATCH', `/v2/order-items/${benItem}`, { quantity: 9 }],
        ['mutation ($id: ID!) { deleteReview(id: $id) }', { id: benReview }, 'DELETE', `/v2/reviews/${benReview}`, undefined],
      ];
      for (const [query, variables, method, path, body] of cases) {
        const res = await gql(server, query, variables, { key: ann.key });
        assert.ok(res.errors?.length === 1, `${query}: ${JSON.stringify(res)}`);
        const rest = await server.request(method, path, { key: ann.key, ...(body !== undefined ? { body } : {}) });
        assert.equal(res.errors![0]!.extensions.code, rest.body.error.code, `${query} → REST ${rest.status}`);
        assert.equal(res.status, 200);
      }
      // Nothing changed.
      assert.equal((await server.request('GET', `/v2/order-items/${benItem}`)).body.quantity, 2);
      assert.equal((await server.request('GET', `/v2/reviews/${benReview}`)).status, 200);
    });

    it('scopes: a credential reads what its scopes cover and nothing else (INSUFFICIENT_SCOPE, in relations too)', async () => {
      const narrow = (await server.request('POST', '/v2/api-keys', { body: { name: 'products only', scopes: ['products:read'] } })).body.key as string;
      assert.ok((await data(server, '{ products { edges { node { id } } } }', undefined, { key: narrow })).products.edges.length > 0);
      onlyError(await gql(server, '{ orders { edges { node { id } } } }', undefined, { key: narrow }), 'INSUFFICIENT_SCOPE');
      onlyError(
        await gql(server, 'mutation { createProduct(input: { name: "x", price: { amount: 1, currency: "EUR" } }) { id } }', undefined, { key: narrow }),
        'INSUFFICIENT_SCOPE',
      );
      const related = await gql(server, 'query ($id: ID!) { product(id: $id) { id reviews { id } } }', { id: productId }, { key: narrow });
      const e = onlyError(related, 'INSUFFICIENT_SCOPE');
      assert.deepEqual(e.path, ['product', 'reviews']);
      assert.equal((await server.request('GET', `/v2/reviews?item_id=${productId}`, { key: narrow })).status, 403);
      // A nullable relation to an unscoped resource is null with its error; the rest of the answer stands.
      const order = await gql(server, 'query ($id: ID!) { product(id: $id) { id orderItemsConnection { totalCount } } }', { id: productId }, { key: narrow });
      assert.equal(onlyError(order, 'INSUFFICIENT_SCOPE').path?.[1], 'orderItemsConnection');
    });

    it('without credentials: 401 with WWW-Authenticate, in the uniform body or, under graphql-response+json, as UNAUTHENTICATED', async () => {
      const plain = await server.request('POST', '/graphql', { key: null, body: { query: '{ products { edges { node { id } } } }' }, headers: { accept: 'application/json' } });
      assert.equal(plain.status, 401);
      assert.equal(plain.body.error.code, 'UNAUTHENTICATED');
      assert.ok(plain.headers['www-authenticate']);
      const res = await gql(server, '{ products { edges { node { id } } } }', undefined, { key: null });
      assert.equal(res.status, 401);
      assert.equal(onlyError(res, 'UNAUTHENTICATED').message, plain.body.error.message);
      assert.ok(res.headers.get('www-authenticate'));
      assert.equal(res.data, undefined);
      const wrong = await gql(server, '{ products { edges { node { id } } } }', undefined, { key: 'ck_not_a_real_key_at_all_0000000000' });
      assert.equal(wrong.status, 401);
      onlyError(wrong, 'UNAUTHENTICATED');
    });
  });
}
