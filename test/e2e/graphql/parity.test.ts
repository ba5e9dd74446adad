// GraphQL and REST agree field by field on the same objects, pages, changes, errors and events, on both stores (issue 29 tests).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCustomer, createProduct, MODES, startServer, type TestServer } from '../../support/harness.js';
import { eventually } from '../../support/eventually.js';
import { asGraphql, data, FIELDS, gql, onlyError } from './support.js';

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`GraphQL agrees with REST (${mode})`, () => {
    let server: TestServer;
    let customer: { userId: string; key: string };
    const products: string[] = [];

    before(async () => {
      server = await startServer(mode);
      customer = await createCustomer(server, 'gql-parity@example.com');
      for (let i = 0; i < 7; i++) {
        const p = await createProduct(server, {
          name: `Parity ${i}`,
          price: { amount: 100 * ((i % 4) + 1), currency: 'EUR' },
          tags: [`t${i}`],
          ...(i === 5 ? { status: 'draft' } : {}),
        });
        products.push(p.id as string);
      }
    });
    after(async () => server.close());

    it('one object of every resource has REST’s fields, in camelCase', async () => {
      const order = await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
      const item = await server.request('POST', `/v2/orders/${order.body.id}/order-items`, { key: customer.key, body: { product_id: products[0], quantity: 3 } });
      const review = await server.request('POST', '/v2/reviews', { key: customer.key, body: { item_id: products[1], rating: 4, title: 'Fine', body: null } });
      const apiKey = await server.request('POST', '/v2/api-keys', { body: { name: 'parity', user_id: customer.userId, scopes: ['products:read'] } });
      const endpoint = await server.request('POST', '/v2/webhook-endpoints', { body: { url: 'https://93.184.216.34/hook', events: ['never.*'], description: 'parity' } });
      const cases: Array<[string, string, string, string]> = [
        ['user', 'users', `/v2/users/${customer.userId}`, FIELDS.users],
        ['product', 'products', `/v2/products/${products[0]}`, FIELDS.products],
        ['order', 'orders', `/v2/orders/${order.body.id}`, FIELDS.orders],
        ['orderItem', 'order-items', `/v2/order-items/${item.body.id}`, FIELDS.orderItems],
        ['review', 'reviews', `/v2/reviews/${review.body.id}`, FIELDS.reviews],
        ['apiKey', 'api-keys', `/v2/api-keys/${apiKey.body.id}`, FIELDS.apiKeys],
        ['webhookEndpoint', 'webhook-endpoints', `/v2/webhook-endpoints/${endpoint.body.id}`, FIELDS.webhookEndpoints],
      ];
      for (const [field, , path, selection] of cases) {
        const rest = await server.request('GET', path);
        assert.equal(rest.status, 200, path);
        const got = await data(server, `query ($id: ID!) { ${field}(id: $id) { ${selection} } }`, { id: rest.body.id });
        assert.deepEqual(got[field], asGraphql(rest.body), field);
      }
    });

    it('a page: the same objects in the same order for the same filters and sort, and the next page by cursor', async () => {
      const query = `query ($after: String) { products(first: 2, filter: { status: { eq: active }, price: { amount: { gte: 200 } } }, sort: "-price.amount,createdAt", after: $after) {
        edges { cursor node { ${FIELDS.products} } } pageInfo { hasNextPage endCursor } } }`;
      let rest = await server.request('GET', '/v2/products?limit=2&status=active&price.amount[gte]=200&sort=-price.amount,created_at');
      let page = (await data(server, query)).products;
      let pages = 0;
      for (;;) {
        pages++;
        assert.deepEqual(
          page.edges.map((e: { node: unknown }) => e.node),
          rest.body.data.map(asGraphql),
        );
        assert.equal(page.pageInfo.hasNextPage, rest.body.pagination.has_more);
        assert.equal(page.edges.at(-1).cursor, page.pageInfo.endCursor);
        if (!page.pageInfo.hasNextPage) break;
        rest = await server.request(
          'GET',
          `/v2/products?limit=2&status=active&price.amount[gte]=200&sort=-price.amount,created_at&cursor=${encodeURIComponent(rest.body.pagination.next_cursor)}`,
        );
        page = (await data(server, query, { after: page.pageInfo.endCursor })).products;
        assert.ok(pages < 10);
      }
      assert.ok(pages >= 2, 'the filter leaves several pages');
      // An edge's cursor continues after that edge.
      const first = (await data(server, '{ products(first: 3, sort: "createdAt") { edges { cursor node { id } } } }')).products.edges;
      const after = (await data(server, 'query ($a: String) { products(first: 1, sort: "createdAt", after: $a) { edges { node { id } } } }', { a: first[0].cursor })).products
        .edges;
      assert.equal(after[0].node.id, first[1].node.id);
    });

    it('totalCount, search and in-filters as REST counts, ranks and filters', async () => {
      const counted = await server.request('GET', '/v2/products?offset=0&limit=1&status=draft');
      assert.equal((await data(server, '{ products(filter: { status: { eq: draft } }) { totalCount } }')).products.totalCount, counted.body.pagination.total);
      const ids = [products[2], products[3]];
      const filtered = (await data(server, 'query ($ids: [ID!]) { products(filter: { id: { in: $ids } }, sort: "id") { edges { node { id } } } }', { ids })).products.edges;
      assert.deepEqual(
        filtered.map((e: { node: { id: string } }) => e.node.id),
        [...ids].sort(),
      );
      const rest = await server.request('GET', '/v2/products?q=Parity&limit=3');
      const searched = (await data(server, '{ products(q: "Parity", first: 3) { edges { node { id } } } }')).products.edges;
      assert.deepEqual(
        searched.map((e: { node: { id: string } }) => e.node.id),
        rest.body.data.map((p: { id: string }) => p.id),
      );
    });

    it('bad arguments are INVALID_QUERY with REST’s details, named as the arguments are', async () => {
      const res = await gql(server, '{ products(first: 500, sort: "-nope") { edges { node { id } } } }');
      const e = onlyError(res, 'INVALID_QUERY');
      assert.deepEqual(
        e.extensions.details!.map((d) => d.field),
        ['sort', 'first'],
      );
      const rest = await server.request('GET', '/v2/products?limit=500&sort=-nope');
      assert.deepEqual(
        e.extensions.details!.map((d) => d.message),
        rest.body.error.details.map((d: { message: string }) => d.message),
      );
      const forged = onlyError(await gql(server, '{ products(after: "not-a-cursor") { edges { node { id } } } }'), 'INVALID_QUERY');
      assert.equal(forged.extensions.details![0]!.field, 'after');
    });

    it('mutations make what REST makes: create, a merge patch, delete, and the events of each', async () => {
      const created = (
        await data(server, `mutation ($input: ProductCreateInput!) { createProduct(input: $input) { ${FIELDS.products} } }`, {
          input: { name: 'Made by GraphQL', description: 'To patch', price: { amount: 990, currency: 'EUR' }, tags: ['gql'] },
        })
      ).createProduct;
      const rest = await server.request('GET', `/v2/products/${created.id}`);
      assert.deepEqual(created, asGraphql(rest.body));
      const patched = (
        await data(server, `mutation ($id: ID!) { updateProduct(id: $id, input: { description: null, price: { amount: 1290 } }) { ${FIELDS.products} } }`, { id: created.id })
      ).updateProduct;
      assert.equal(patched.description, null);
      assert.deepEqual(patched.price, { amount: 1290, currency: 'EUR' }, 'a merge patch keeps the currency');
      assert.deepEqual(patched, asGraphql((await server.request('GET', `/v2/products/${created.id}`)).body));
      const events = await server.request('GET', `/events?type=product.*&limit=100`);
      const mine = events.body.data.filter((e: { data: { object: { id: string } } }) => e.data.object.id === created.id);
      assert.deepEqual(
        mine.map((e: { type: string }) => e.type),
        ['product.created', 'product.updated'],
      );
      assert.deepEqual(asGraphql(mine[1].data.object), patched, 'the event holds the object as both front ends show it');
      assert.deepEqual(mine[1].previous_attributes, { description: 'To patch', price: { amount: 990, currency: 'EUR' } });
      assert.equal((await data(server, 'mutation ($id: ID!) { deleteProduct(id: $id) }', { id: created.id })).deleteProduct, created.id);
      assert.equal((await server.request('GET', `/v2/products/${created.id}`)).status, 404);
      await eventually(async () => {
        const after = await server.request('GET', `/events?type=product.deleted&limit=100`);
        return after.body.data.some((e: { data: { object: { id: string } } }) => e.data.object.id === created.id);
      }, 'the product.deleted event');
    });

    it('a customer’s order, its items and the actions: the same totals, states, events and the 202 body', async () => {
      const order = (await data(server, 'mutation { createOrder(input: {}) { id userId status total { amount currency } } }', undefined, { key: customer.key })).createOrder;
      assert.equal(order.userId, customer.userId);
      assert.deepEqual(order.total, { amount: 0, currency: 'EUR' });
      const item = (
        await data(
          server,
          'mutation ($o: ID!, $p: ID!) { createOrderItem(input: { orderId: $o, productId: $p, quantity: 2 }) { quantity unitPrice { amount } order { total { amount } } product { id } } }',
          { o: order.id, p: products[3] },
          { key: customer.key },
        )
      ).createOrderItem;
      const rest = await server.request('GET', `/v2/orders/${order.id}`, { key: customer.key });
      assert.equal(item.order.total.amount, rest.body.total.amount, 'the total recomputed, read after the change');
      assert.equal(rest.body.total.amount, 2 * item.unitPrice.amount);
      const paid = (await data(server, 'mutation ($id: ID!) { payOrder(id: $id) { status } }', { id: order.id }, { key: customer.key })).payOrder;
      assert.deepEqual(paid, { status: 'processing' }, 'REST’s 202 body');
      const state = await server.request('GET', `/v2/orders/${order.id}/payment`, { key: customer.key });
      assert.ok(['processing', 'succeeded'].includes(state.body.status));
      const held = await gql(server, 'mutation ($id: ID!) { cancelOrder(id: $id) { status } }', { id: order.id }, { key: customer.key });
      if (held.errors) {
        // The payment still held the order: refused, and the order is cancelled once the payment is performed.
        assert.equal(onlyError(held, 'INVALID_STATE').path?.[0], 'cancelOrder');
        await eventually(async () => (await server.request('GET', `/v2/orders/${order.id}`, { key: customer.key })).body.status === 'paid', 'the payment performed');
        const cancelled = (await data(server, 'mutation ($id: ID!) { cancelOrder(id: $id) { id status } }', { id: order.id }, { key: customer.key })).cancelOrder;
        assert.equal(cancelled.status, 'cancelled');
      } else {
        // The worker performed the payment before the cancel came (a loaded machine, or CANON_PAYMENT_DELAY_MS=0):
        // the paid order was cancelled then. Waiting for `paid` here would wait for a state it already left.
        assert.deepEqual(held.data, { cancelOrder: { status: 'cancelled' } });
      }
      const again = await gql(server, 'mutation ($id: ID!) { cancelOrder(id: $id) { id } }', { id: order.id }, { key: customer.key });
      const restAgain = await server.request('POST', `/v2/orders/${order.id}/cancel`, { key: customer.key });
      assert.equal(restAgain.status, 409);
      assert.equal(onlyError(again, 'INVALID_STATE').message, restAgain.body.error.message);
      assert.equal(again.data, null, 'a failed non-null mutation leaves no data');
      const types = (await server.request('GET', `/events?type=order.*&limit=100`, { key: customer.key })).body.data
        .filter((e: { data: { object: { id: string } } }) => e.data.object.id === order.id)
        .map((e: { type: string }) => e.type);
      assert.deepEqual(types, ['order.created', 'order.updated', 'order.paid', 'order.cancelled']);
    });

    it('validation errors carry REST’s details, fields in camelCase', async () => {
      const res = await gql(server, 'mutation { createUser(input: { email: "not-an-email", fullName: "" }) { id } }');
      const e = onlyError(res, 'VALIDATION_ERROR');
      const rest = await server.request('POST', '/v2/users', { body: { email: 'not-an-email', full_name: '' } });
      assert.equal(rest.status, 422);
      assert.deepEqual(
        e.extensions.details!.map((d) => [d.field, d.message]).sort(),
        rest.body.error.details.map((d: { field: string; message: string }) => [d.field.replace('full_name', 'fullName'), d.message]).sort(),
      );
      assert.equal(res.status, 200, 'field errors travel in a 200 body');
    });

    it('relations both ways: an order’s user and items with their products, a user’s orders, as REST’s nested lists', async () => {
      const order = await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
      for (const p of [products[0], products[2]])
        await server.request('POST', `/v2/orders/${order.body.id}/order-items`, { key: customer.key, body: { product_id: p, quantity: 1 } });
      const got = (
        await data(
          server,
          `query ($id: ID!) { order(id: $id) { user { ${FIELDS.users} } items { ${FIELDS.orderItems} product { ${FIELDS.products} } } itemsConnection { totalCount } } }`,
          {
            id: order.body.id,
          },
        )
      ).order;
      assert.deepEqual(got.user, asGraphql((await server.request('GET', `/v2/users/${customer.userId}`)).body));
      const items = (await server.request('GET', `/v2/orders/${order.body.id}/order-items`)).body.data;
      assert.deepEqual(
        got.items.map((i: Record<string, unknown>) => ({ ...i, product: undefined })),
        items.map((i: Record<string, unknown>) => ({ ...asGraphql(i), product: undefined })),
      );
      for (const i of got.items) assert.deepEqual(i.product, asGraphql((await server.request('GET', `/v2/products/${i.productId}`)).body));
      assert.equal(got.itemsConnection.totalCount, items.length);
      const mine = (await data(server, 'query ($id: ID!) { user(id: $id) { orders(first: 100) { id } } }', { id: customer.userId })).user.orders;
      const rest = (await server.request('GET', `/v2/users/${customer.userId}/orders?limit=100`)).body.data;
      assert.deepEqual(
        mine.map((o: { id: string }) => o.id),
        rest.map((o: { id: string }) => o.id),
      );
    });

    it('a relation’s connection pages as REST’s nested list does, its cursors continuing the batched first page', async () => {
      const order = await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
      for (const p of products.slice(0, 4)) await server.request('POST', `/v2/orders/${order.body.id}/order-items`, { key: customer.key, body: { product_id: p, quantity: 1 } });
      const q =
        'query ($id: ID!, $after: String) { order(id: $id) { itemsConnection(first: 3, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } totalCount } } }';
      const first = (await data(server, q, { id: order.body.id })).order.itemsConnection;
      assert.equal(first.pageInfo.hasNextPage, true);
      assert.equal(first.totalCount, 4);
      const second = (await data(server, q, { id: order.body.id, after: first.pageInfo.endCursor })).order.itemsConnection;
      assert.equal(second.pageInfo.hasNextPage, false);
      const rest = (await server.request('GET', `/v2/orders/${order.body.id}/order-items?limit=100`)).body.data.map((i: { id: string }) => i.id);
      assert.deepEqual(
        [...first.edges, ...second.edges].map((e: { node: { id: string } }) => e.node.id),
        rest,
      );
      // A cursor of one order's items is refused by another's.
      const other = await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
      const refused = await gql(server, q, { id: other.body.id, after: first.pageInfo.endCursor });
      assert.equal(refused.errors?.[0]?.extensions.code, 'INVALID_QUERY');
    });
  });
}
