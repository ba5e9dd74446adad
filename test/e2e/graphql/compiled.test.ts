// An operation's first run (graphql-js) and its later, compiled runs (graphql-jit) answer byte for byte alike: data, field errors, variables, fragments, directives, aliases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, createCustomer, MODES, startServer, type TestServer } from '../../support/harness.js';
import { FIELDS } from './support.js';

const RUNS = 3;

for (const mode of MODES.filter((m) => m.startsWith('inject'))) {
  describe(`GraphQL operations answer alike before and after they are compiled (${mode})`, () => {
    let server: TestServer;
    let productId: string;
    let orderId: string;
    let customerKey: string;
    before(async () => {
      server = await startServer(mode, { worker: 'off' });
      const product = await server.request('POST', '/v2/products', { body: { name: 'Compiled', price: { amount: 1250, currency: 'EUR' }, status: 'active' } });
      productId = product.body.id;
      const customer = await createCustomer(server, 'compiled@example.com');
      customerKey = customer.key;
      const order = await server.request('POST', '/v2/orders', { body: { user_id: customer.userId } });
      orderId = order.body.id;
      await server.request('POST', `/v2/orders/${orderId}/items`, { body: { product_id: productId, quantity: 2 } });
    });
    after(async () => server.close());

    /** Sends the same operation RUNS times; every answer must equal the first, status and body. */
    async function alike(body: Record<string, unknown>, key?: string): Promise<{ status: number; text: string }> {
      const answers: Array<{ status: number; text: string }> = [];
      for (let i = 0; i < RUNS; i++) {
        const res = await server.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...(key ? { 'x-api-key': key } : {}) },
          payload: JSON.stringify(body),
        });
        answers.push({ status: res.statusCode, text: res.body });
      }
      for (const a of answers.slice(1)) assert.deepEqual(a, answers[0], JSON.stringify(body));
      return answers[0]!;
    }

    const admin = (): string => ADMIN_KEY;

    it('data: relations both ways, connections, aliases, fragments, directives, variables and __typename', async () => {
      const cases: Array<Record<string, unknown>> = [
        { query: `{ product(id: "${productId}") { ${FIELDS.products} __typename } }` },
        {
          query: `{ products(first: 5, sort: "-createdAt") { totalCount edges { cursor node { ${FIELDS.products} } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
        },
        {
          query: `query Q($id: ID!, $withUser: Boolean!) { order(id: $id) { ...O user @include(if: $withUser) { email } items { quantity product { name price { amount currency } } } } }
                  fragment O on Order { id status total { amount currency } }`,
          variables: { id: orderId, withUser: true },
        },
        { query: `query Q($id: ID!, $withUser: Boolean!) { order(id: $id) { id user @include(if: $withUser) { email } } }`, variables: { id: orderId, withUser: false } },
        { query: `{ a: product(id: "${productId}") { name } b: products(first: 1, filter: { status: { eq: active } }) { edges { node { id } } } }` },
        { query: `query One { product(id: "${productId}") { id } } query Two { products(first: 1) { edges { node { name } } } }`, operationName: 'Two' },
      ];
      for (const body of cases) {
        const answer = await alike(body, admin());
        assert.equal(answer.status, 200, answer.text);
        assert.equal(JSON.parse(answer.text).errors, undefined, answer.text);
      }
    });

    it('field errors: an object the caller may not see, a bad id, a bad cursor, and a null in a non-null field', async () => {
      const other = await createCustomer(server, 'compiled-other@example.com');
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [{ query: `{ order(id: "${orderId}") { id } }` }, other.key, 'NOT_FOUND'],
        [{ query: `{ product(id: "not-a-uuid") { id } }` }, admin(), 'BAD_REQUEST'],
        [{ query: `{ products(first: 1, after: "forged") { edges { node { id } } } }` }, admin(), 'INVALID_QUERY'],
        [{ query: `{ order(id: "${orderId}") { id user { email } } }` }, customerKey, ''],
      ];
      for (const [body, key, code] of cases) {
        const answer = await alike(body, key);
        const parsed = JSON.parse(answer.text) as { errors?: Array<{ extensions: { code: string } }> };
        if (code === '') assert.equal(parsed.errors, undefined, answer.text);
        else assert.equal(parsed.errors?.[0]?.extensions.code, code, answer.text);
      }
    });

    it('variables that do not fit the operation are refused alike on every run', async () => {
      const answer = await alike({ query: 'query Q($first: Int!) { products(first: $first) { edges { node { id } } } }', variables: { first: 'many' } }, admin());
      assert.equal(answer.status, 400, answer.text);
      assert.equal(JSON.parse(answer.text).errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED');
    });
  });
}
