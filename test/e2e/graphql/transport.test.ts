// GraphQL over HTTP (issue 29.2–3): GET for queries, POST for all, the two media types, what is no GraphQL request (400) or a mutation by GET (405), CSRF on cookies, and the rate limit counting an operation by its cost.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCustomer, errorShape, GENEROUS_LIMITS, MODES, startServer, type TestServer } from '../../support/harness.js';
import { gql, onlyError } from './support.js';

const PRODUCTS = '{ products(first: 1) { edges { node { id } } } }';

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`GraphQL over HTTP (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode, { worker: 'off' });
    });
    after(async () => server.close());

    const count = async (): Promise<number> => (await server.request('GET', '/v2/products?offset=0&limit=1')).body.pagination.total;

    it('a request that is no GraphQL request is 400 in the uniform error body', async () => {
      for (const [body, field] of [
        [{}, 'query'],
        [{ query: 1 }, 'query'],
        [{ query: PRODUCTS, variables: [1] }, 'variables'],
        [{ query: PRODUCTS, operationName: 3 }, 'operationName'],
        [[{ query: PRODUCTS }], '(body)'],
      ] as const) {
        const res = await server.request('POST', '/graphql', { body });
        assert.equal(res.status, 400, JSON.stringify(body));
        const e = errorShape(res);
        assert.equal(e.code, 'BAD_REQUEST');
        assert.equal(e.details?.[0]?.field, field);
      }
      const broken = await server.request('POST', '/graphql', { body: '{"query": ', headers: { 'content-type': 'application/json' } });
      assert.equal(broken.status, 400);
      assert.equal(errorShape(broken).code, 'INVALID_JSON');
      for (const query of ['', `?query=${encodeURIComponent(PRODUCTS)}&variables=%7Bnot-json`, `?query=${encodeURIComponent(PRODUCTS)}&query=x`]) {
        const res = await server.request('GET', `/graphql${query}`);
        assert.equal(res.status, 400, query);
        assert.equal(errorShape(res).code, 'BAD_REQUEST');
      }
      const form = await server.request('POST', '/graphql', { body: `query=${encodeURIComponent(PRODUCTS)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(form.status, 415);
      const text = await server.request('POST', '/graphql', { body: PRODUCTS, headers: { 'content-type': 'text/plain' } });
      assert.equal(text.status, 415);
    });

    it('GET runs queries; a mutation by GET is 405 with Allow: POST and runs nothing', async () => {
      const got = await server.request(
        'GET',
        `/graphql?query=${encodeURIComponent('query ($n: Int) { products(first: $n) { edges { node { id } } } }')}&variables=${encodeURIComponent('{"n":1}')}`,
      );
      assert.equal(got.status, 200, got.text);
      assert.equal(got.headers['cache-control'], 'private, no-cache');
      const posted = await server.request('POST', '/graphql', { body: { query: 'query ($n: Int) { products(first: $n) { edges { node { id } } } }', variables: { n: 1 } } });
      assert.deepEqual(got.body, posted.body);
      assert.equal(posted.headers['cache-control'], 'no-store');
      const before = await count();
      const mutation = 'mutation { createProduct(input: { name: "by GET", price: { amount: 1, currency: "EUR" } }) { id } }';
      const refused = await server.request('GET', `/graphql?query=${encodeURIComponent(mutation)}`);
      assert.equal(refused.status, 405);
      assert.equal(errorShape(refused).code, 'METHOD_NOT_ALLOWED');
      assert.equal(refused.headers.allow, 'POST');
      // The operation chosen by operationName decides, whatever else the document holds.
      const both = `query Q { __typename } ${mutation.replace('mutation', 'mutation M')}`;
      assert.equal((await server.request('GET', `/graphql?query=${encodeURIComponent(both)}&operationName=M`)).status, 405);
      assert.equal((await server.request('GET', `/graphql?query=${encodeURIComponent(both)}&operationName=Q`)).status, 200);
      assert.equal(await count(), before, 'nothing was created');
      // graphql-request sends a query by GET when asked.
      assert.equal((await gql(server, PRODUCTS, undefined, { method: 'GET' })).status, 200);
    });

    it('the media types: application/graphql-response+json when asked (request errors 4xx), application/json otherwise (200), 406 for neither', async () => {
      const newer = await server.request('POST', '/graphql', { body: { query: PRODUCTS }, headers: { accept: 'application/graphql-response+json' } });
      assert.equal(newer.status, 200);
      assert.match(newer.headers['content-type']!, /^application\/graphql-response\+json; charset=utf-8$/);
      for (const accept of ['application/json', '*/*', undefined]) {
        const res = await server.request('POST', '/graphql', { body: { query: '{ nope }' }, headers: accept ? { accept } : {} });
        assert.equal(res.status, 200, String(accept));
        assert.match(res.headers['content-type']!, /^application\/json/);
        assert.equal(res.body.errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED');
      }
      const invalid = await gql(server, '{ nope }');
      assert.equal(invalid.status, 400);
      onlyError(invalid, 'GRAPHQL_VALIDATION_FAILED');
      const unparsed = onlyError(await gql(server, '{ products( }'), 'GRAPHQL_PARSE_FAILED');
      assert.ok(unparsed.message.startsWith('Syntax Error'));
      const badVariables = await gql(server, 'query ($n: Int!) { products(first: $n) { edges { node { id } } } }', { n: 'many' });
      assert.equal(badVariables.status, 400);
      onlyError(badVariables, 'GRAPHQL_VALIDATION_FAILED');
      const html = await server.request('POST', '/graphql', { body: { query: PRODUCTS }, headers: { accept: 'text/html' } });
      assert.equal(html.status, 406);
      assert.equal(errorShape(html).code, 'NOT_ACCEPTABLE');
    });

    it('a cookie session needs its CSRF token on POST, as every cookie-authenticated write (DESIGN §8)', async () => {
      const customer = await createCustomer(server, 'gql-cookie@example.com');
      const login = await server.request('POST', '/v2/sessions', { key: null, body: { email: 'gql-cookie@example.com', password: 'long enough password' } });
      assert.equal(login.status, 201, login.text);
      const cookie = login.setCookies.map((c) => c.split(';')[0]).join('; ');
      const without = await server.request('POST', '/graphql', { key: null, body: { query: PRODUCTS }, headers: { cookie } });
      assert.equal(without.status, 403);
      assert.equal(errorShape(without).code, 'CSRF_TOKEN_INVALID');
      const shaped = await gql(server, PRODUCTS, undefined, { key: null, headers: { cookie } });
      assert.equal(shaped.status, 403);
      onlyError(shaped, 'CSRF_TOKEN_INVALID');
      const withToken = await gql(server, '{ orders { edges { node { userId } } } }', undefined, { key: null, headers: { cookie, 'x-csrf-token': login.body.csrf_token } });
      assert.equal(withToken.status, 200);
      for (const e of withToken.data.orders.edges) assert.equal(e.node.userId, customer.userId);
      // A query by GET is a read: no token needed.
      assert.equal((await server.request('GET', `/graphql?query=${encodeURIComponent(PRODUCTS)}`, { key: null, headers: { cookie } })).status, 200);
    });
  });
}

describe('the rate limit counts an operation by its cost (CANON_GRAPHQL_COST_PER_REQUEST)', () => {
  let server: TestServer;
  before(async () => {
    // 12 requests an hour per principal (no refill to speak of during the test); 100 of cost per request.
    server = await startServer('listen', { rateLimits: { ...GENEROUS_LIMITS, perPrincipal: { limit: 12, periodSeconds: 3600 } }, worker: 'off' });
  });
  after(async () => server.close());

  it('a cheap query counts one request, one of cost 201 three; past the limit it is RATE_LIMITED and runs nothing', async () => {
    const cheap = await gql(server, PRODUCTS);
    const left = Number(cheap.headers.get('x-ratelimit-remaining'));
    assert.equal(left, 11);
    const costly = await gql(server, '{ products(first: 100) { edges { node { id } } } }');
    assert.equal(costly.errors, undefined);
    assert.equal(Number(costly.headers.get('x-ratelimit-remaining')), left - 3, 'cost 1 + 100 × 2 = 201: three requests');
    // Eight left: a query of cost 1 + 100 × (2 + 8) = 1,001 (eleven requests) is refused after its arrival counted one.
    const heavy = '{ products(first: 100) { edges { node { id reviews(first: 7) { user { id } } } } } }';
    const refused = await gql(server, heavy);
    assert.equal(refused.status, 429);
    assert.equal(refused.data, undefined);
    onlyError(refused, 'RATE_LIMITED');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    const plain = await server.request('POST', '/graphql', { body: { query: heavy }, headers: { accept: 'application/json' } });
    assert.equal(plain.status, 200, 'under application/json the refusal travels in a 200 body');
    assert.equal(plain.body.errors[0].extensions.code, 'RATE_LIMITED');
    assert.ok(plain.headers['retry-after']);
  });
});
