// The lean POST /graphql path (src/http/graphql/fast-graphql.ts) against the Fastify route: same status, headers and body, which path answered, and what it leaves to Fastify.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { ADMIN_KEY, GENEROUS_LIMITS, MODES, createCustomer, createProduct, fromFetch, fromInject, startServer, type Response, type TestServer } from '../../support/harness.js';
import { stable } from '../../support/same-answer.js';

type Body = string | Buffer;

/** Always through Fastify: in-process inject never reaches the server's listener. */
async function viaFastify(server: TestServer, headers: Record<string, string>, body: Body): Promise<Response> {
  return fromInject(await server.app.inject({ method: 'POST', url: '/graphql', headers, payload: body }));
}

/** Through the listening socket, where the lean path may answer. */
async function viaSocket(server: TestServer, headers: Record<string, string>, body: Body): Promise<Response> {
  return fromFetch(await fetch(`${server.baseUrl}/graphql`, { method: 'POST', headers, body }));
}

const JSON_TYPE = { 'content-type': 'application/json' };

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`lean POST /graphql agrees with the Fastify route (${mode})`, () => {
    let server: TestServer;
    let product: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    before(async () => {
      server = await startServer(mode, { worker: 'off' });
      product = await createProduct(server, { name: 'Lean GraphQL' });
    });
    after(async () => {
      await server.close();
    });

    /** Sends the request both ways; returns the socket's answer and whether the lean path served it. */
    async function both(headers: Record<string, string>, body: Body): Promise<{ res: Response; lean: boolean }> {
      const before = server.app.fastGraphql.served;
      const res = await viaSocket(server, headers, body);
      const lean = server.app.fastGraphql.served === before + 1;
      const reference = await viaFastify(server, headers, body);
      assert.deepEqual(stable(res), stable(reference), `${JSON.stringify(headers)} ${String(body).slice(0, 200)}`);
      assert.ok(res.headers['x-request-id'], 'X-Request-Id missing');
      if (res.body?.error) assert.equal(res.body.error.request_id, res.headers['x-request-id']);
      return { res, lean };
    }

    const admin = { 'x-api-key': ADMIN_KEY, ...JSON_TYPE };
    const one = (id: string): string => JSON.stringify({ query: `query One($id: ID!) { product(id: $id) { id name price { amount currency } status } }`, variables: { id } });

    it('serves the engine’s answer with the route’s status, headers and body, in each response media type', async () => {
      assert.deepEqual(server.app.fastGraphql.declined, {});
      for (const accept of [undefined, 'application/json', 'application/graphql-response+json', 'application/graphql-response+json, application/json;q=0.9', '*/*']) {
        const { res, lean } = await both({ ...admin, ...(accept ? { accept } : {}) }, one(product.id));
        assert.equal(lean, true, `accept ${accept}`);
        assert.equal(res.status, 200);
        assert.deepEqual(res.body.data.product, { id: product.id, name: 'Lean GraphQL', price: { amount: 1000, currency: 'EUR' }, status: 'active' });
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.equal(
          res.headers['content-type'],
          `${accept?.startsWith('application/graphql-response+json') ? 'application/graphql-response+json' : 'application/json'}; charset=utf-8`,
        );
        assert.ok(res.headers['x-ratelimit-limit']);
        assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.text)));
      }
    });

    it('a charset parameter of UTF-8 is taken; a mutation runs once per request and writes what REST then reads', async () => {
      const mutation = JSON.stringify({ query: 'mutation { createProduct(input: {name: "Made lean", price: {amount: 250, currency: "EUR"}}) { id name } }' });
      const before = server.app.fastGraphql.served;
      const res = await viaSocket(server, { ...admin, 'content-type': 'application/json; charset=UTF-8' }, mutation);
      assert.equal(server.app.fastGraphql.served, before + 1);
      assert.equal(res.status, 200, res.text);
      const id = res.body.data.createProduct.id as string;
      const rest = await server.request('GET', `/v2/products/${id}`);
      assert.deepEqual([rest.status, rest.body.name], [200, 'Made lean']);
    });

    it('field errors and invalid documents are GraphQL answers: 200 under application/json, 400 under graphql-response+json when nothing ran', async () => {
      const missing = JSON.stringify({ query: `{ product(id: "${'0'.repeat(8)}-0000-7000-8000-000000000000") { id } }` });
      const notFound = await both(admin, missing);
      assert.deepEqual([notFound.lean, notFound.res.status, notFound.res.body.errors[0].extensions.code], [true, 200, 'NOT_FOUND']);
      const invalid = JSON.stringify({ query: '{ product(id: "x") { nope } }' });
      const asJson = await both(admin, invalid);
      assert.deepEqual([asJson.lean, asJson.res.status, asJson.res.body.errors[0].extensions.code], [true, 200, 'GRAPHQL_VALIDATION_FAILED']);
      const asGraphql = await both({ ...admin, accept: 'application/graphql-response+json' }, invalid);
      assert.deepEqual([asGraphql.lean, asGraphql.res.status], [true, 400]);
    });

    it('a body that is no GraphQL request gets the uniform error body, as from the route', async () => {
      const cases: Array<[Body, string]> = [
        ['{"query": ', 'INVALID_JSON'],
        [Buffer.from([0x7b, 0x22, 0x71, 0xff, 0x22, 0x7d]), 'INVALID_JSON'],
        ['{"query": "{ __typename }", "__proto__": {"x": 1}}', 'INVALID_JSON'],
        ['{"query": "{ __typename }", "a": {"constructor": 1}}', 'INVALID_JSON'],
        [`{"query": "{ __typename }", "v": ${'['.repeat(200)}${']'.repeat(200)}}`, 'INVALID_JSON'],
        ['[]', 'BAD_REQUEST'],
        ['{"variables": {}}', 'BAD_REQUEST'],
        ['{"query": 5}', 'BAD_REQUEST'],
        ['"text"', 'BAD_REQUEST'],
      ];
      for (const [body, code] of cases) {
        const { res, lean } = await both(admin, body);
        assert.deepEqual([lean, res.status, res.body.error.code], [true, 400, code], String(body));
      }
    });

    it('leaves to Fastify what it does not stand in for, with the same answers', async () => {
      const q = JSON.stringify({ query: '{ __typename }' });
      const customer = await createCustomer(server, 'lean-graphql@example.com');
      const declined: Array<[string, Record<string, string>, Body]> = [
        ['a cookie', { ...admin, cookie: 'theme=dark' }, q],
        ['another charset', { ...admin, 'content-type': 'application/json; charset=latin1' }, q],
        ['another type', { ...admin, 'content-type': 'text/plain' }, q],
        ['a form', { ...admin, 'content-type': 'application/x-www-form-urlencoded' }, 'query=%7B__typename%7D'],
        ['a content coding', { ...admin, 'content-encoding': 'gzip' }, q],
        ['no acceptable media type', { ...admin, accept: 'text/html' }, q],
        ['an unknown key', { 'x-api-key': 'ck_not_a_key_0000000000000000000000', ...JSON_TYPE }, q],
        ['no credentials', JSON_TYPE, q],
        ['a customer key (cached only once used)', { 'x-api-key': customer.key, ...JSON_TYPE }, q],
      ];
      for (const [what, headers, body] of declined) {
        const before = server.app.fastGraphql.served;
        const { res } = await both(headers, body);
        const lean = server.app.fastGraphql.served > before;
        if (what.startsWith('a customer key')) assert.equal(lean, true, what);
        else assert.equal(lean, false, `${what}: ${res.status}`);
      }
      // A stream is the route's (GraphQL over SSE).
      const before = server.app.fastGraphql.served;
      const stream = await fetch(`${server.baseUrl}/graphql`, { method: 'POST', headers: { ...admin, accept: 'text/event-stream' }, body: q });
      assert.equal(stream.status, 200);
      assert.match(await stream.text(), /event: next/);
      assert.equal(server.app.fastGraphql.served, before);
    });

    it('an Idempotency-Key request is the route’s: replayed whole, never by the lean path', async () => {
      const mutation = JSON.stringify({ query: 'mutation { createProduct(input: {name: "Keyed", price: {amount: 5, currency: "EUR"}}) { id } }' });
      const headers = { ...admin, 'idempotency-key': `lean-${Date.now()}` };
      const before = server.app.fastGraphql.served;
      const first = await viaSocket(server, headers, mutation);
      const again = await viaSocket(server, headers, mutation);
      assert.equal(server.app.fastGraphql.served, before);
      assert.deepEqual([first.status, again.status, again.headers['idempotent-replayed']], [200, 200, 'true']);
      assert.equal(again.body.data.createProduct.id, first.body.data.createProduct.id);
    });

    it('a body sent in chunks (no Content-Length) and one over the body limit go to Fastify', async () => {
      const before = server.app.fastGraphql.served;
      const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const url = new URL(`${server.baseUrl}/graphql`);
        const req = httpRequest({ host: url.hostname, port: url.port, path: '/graphql', method: 'POST', headers: { ...admin, 'transfer-encoding': 'chunked' } }, (res) => {
          let text = '';
          res
            .setEncoding('utf8')
            .on('data', (c: string) => (text += c))
            .on('end', () => resolve({ status: res.statusCode!, body: text }));
        });
        req.on('error', reject);
        req.write('{"query": ');
        req.end('"{ __typename }"}');
      });
      assert.deepEqual([chunked.status, JSON.parse(chunked.body)], [200, { data: { __typename: 'Query' } }]);
      const big = JSON.stringify({ query: `{ __typename }${' '.repeat(server.runtime.config.bodyLimitBytes)}` });
      const tooLarge = await both(admin, big);
      assert.deepEqual([tooLarge.res.status, tooLarge.res.body.error.code], [413, 'PAYLOAD_TOO_LARGE']);
      assert.equal(server.app.fastGraphql.served, before);
    });
  });
}

describe('lean POST /graphql: rate limits as the route counts them', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('listen', { rateLimits: { ...GENEROUS_LIMITS, perPrincipal: { limit: 6, periodSeconds: 3600 } }, graphqlCostPerRequest: 10, worker: 'off' });
  });
  after(async () => {
    await server.close();
  });

  it('counts arrival and cost, then refuses with 429: GraphQL’s shape under graphql-response+json, the uniform body under application/json', async () => {
    const headers = { 'x-api-key': ADMIN_KEY, ...JSON_TYPE };
    const post = (extra: Record<string, string> = {}): Promise<Response> =>
      viaSocket(server, { ...headers, ...extra }, JSON.stringify({ query: '{ products(first: 20) { edges { node { id } } } }' }));
    const before = server.app.fastGraphql.served;
    const first = await post();
    assert.equal(first.status, 200, first.text);
    const remaining = Number(first.headers['x-ratelimit-remaining']);
    assert.ok(remaining < 5, `the page's cost is charged beyond its arrival: ${remaining} left of 6`);
    let refused: Response | undefined;
    for (let i = 0; i < 8 && refused === undefined; i++) {
      const res = await post({ accept: 'application/graphql-response+json' });
      if (res.status === 429) refused = res;
    }
    assert.ok(refused, 'never refused');
    assert.equal(refused.headers['content-type'], 'application/graphql-response+json; charset=utf-8');
    assert.equal(refused.body.errors[0].extensions.code, 'RATE_LIMITED');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal(refused.headers['x-ratelimit-remaining'], '0');
    const plain = await post();
    assert.deepEqual([plain.status, plain.body.error.code, plain.headers['content-type']], [429, 'RATE_LIMITED', 'application/json; charset=utf-8']);
    assert.ok(server.app.fastGraphql.served >= before + 3, 'the lean path answered them');
  });
});
