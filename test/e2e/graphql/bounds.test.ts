// Bounds measured before anything runs (issue 29.5): depth and cost refusals say why and run nothing; limits, introspection and persisted queries by configuration.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { getIntrospectionQuery } from 'graphql';
import { MODES, startServer, type TestServer } from '../../support/harness.js';
import { queryHash } from '../../../src/graphql/persisted.js';
import { countReads, data, gql, onlyError } from './support.js';

/** Depth 11: users, edges, node, orders, items, product, reviews, user, orders, items, id. */
const DEEP = '{ users { edges { node { orders { items { product { reviews { user { orders { items { id } } } } } } } } } } }';
/** Cost 10,301: 1 + 100 × (edges 1 + node 1 + reviews (1 + 100 × user 1)). */
const COSTLY = '{ products(first: 100) { edges { node { reviews(first: 100) { user { id } } } } } }';

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`depth and cost (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode, { worker: 'off' });
    });
    after(async () => server.close());

    it('a query deeper than 10 is QUERY_TOO_COMPLEX, naming its depth, and reads nothing', async () => {
      // The key is read (and cached) by a request before: what is counted is the refused one's own reading.
      await data(server, '{ __typename }');
      const reads = countReads(server.runtime.store);
      const res = await gql(server, DEEP);
      const { count } = reads.stop();
      const e = onlyError(res, 'QUERY_TOO_COMPLEX');
      assert.deepEqual(
        e.extensions.details?.find((d) => d.field === 'depth'),
        { field: 'depth', message: 'is more than 10, the deepest an operation may nest', value: 11 },
      );
      assert.equal(res.data, undefined, 'nothing ran: no data');
      assert.equal(res.status, 400, 'no data under graphql-response+json: 4xx');
      assert.equal(count, 0);
    });

    it('a query costing more than 10,000 is refused with its cost; a mutation refused so creates nothing', async () => {
      const e = onlyError(await gql(server, COSTLY), 'QUERY_TOO_COMPLEX');
      assert.deepEqual(e.extensions.details, [{ field: 'cost', message: "is more than 10000: each object field counts 1, a paged field's selection `first` times", value: 10301 }]);
      assert.match(e.message, /cost 10301/);
      // At the limit: 1 + 100 × (3 + 96) = 9,901 runs; with 97 reviews each, 10,001 does not.
      assert.equal((await gql(server, COSTLY.replace('reviews(first: 100)', 'reviews(first: 96)'))).errors, undefined);
      onlyError(await gql(server, COSTLY.replace('reviews(first: 100)', 'reviews(first: 97)')), 'QUERY_TOO_COMPLEX');
      const before = (await server.request('GET', '/v2/products?offset=0&limit=1')).body.pagination.total;
      const mutation = `mutation { createProduct(input: { name: "never", price: { amount: 1, currency: "EUR" } }) { id reviews(first: 100) { item { reviews(first: 100) { user { id } } } } } }`;
      onlyError(await gql(server, mutation), 'QUERY_TOO_COMPLEX');
      assert.equal((await server.request('GET', '/v2/products?offset=0&limit=1')).body.pagination.total, before, 'the mutation did not run');
    });

    it('variables count as they will be taken: a first from a variable, or its default', async () => {
      const q = 'query ($n: Int = 100, $m: Int) { products(first: $n) { edges { node { reviews(first: $m) { user { id } } } } } }';
      onlyError(await gql(server, q, { m: 100 }), 'QUERY_TOO_COMPLEX');
      assert.equal((await gql(server, q, { n: 10, m: 100 })).errors, undefined);
    });

    it('under application/json a refusal is a 200 whose body says why (DESIGN §7)', async () => {
      const res = await server.request('POST', '/graphql', { body: { query: DEEP }, headers: { accept: 'application/json' } });
      assert.equal(res.status, 200);
      assert.equal(res.body.errors[0].extensions.code, 'QUERY_TOO_COMPLEX');
      assert.equal('data' in res.body, false);
    });
  });
}

describe('bounds and switches by configuration', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'canon-gql-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('depth and cost limits are settings (CANON_GRAPHQL_MAX_DEPTH, CANON_GRAPHQL_MAX_COST)', async () => {
    const tight = await startServer('listen', { graphqlMaxDepth: 4, graphqlMaxCost: 5 });
    try {
      assert.equal((await gql(tight, '{ products(first: 2) { edges { node { id } } } }')).errors, undefined, 'depth 4, cost 1 + 2 × 2 = 5');
      const deeper = onlyError(await gql(tight, '{ products(first: 2) { edges { node { price { amount } } } } }'), 'QUERY_TOO_COMPLEX');
      assert.deepEqual(
        deeper.extensions.details!.map((d) => [d.field, d.value]),
        [
          ['depth', 5],
          ['cost', 7],
        ],
      );
      onlyError(await gql(tight, '{ products(first: 3) { edges { node { id } } } }'), 'QUERY_TOO_COMPLEX');
    } finally {
      await tight.close();
    }
  });

  it('introspection is off in production unless turned on, on in development; __typename always answers', async () => {
    const production = await startServer('listen', { production: true });
    try {
      const refused = await gql(production, getIntrospectionQuery());
      assert.equal(refused.errors?.[0]?.extensions.code, 'GRAPHQL_VALIDATION_FAILED');
      assert.match(refused.errors![0]!.message, /introspection/i);
      assert.equal((await data(production, '{ __typename }')).__typename, 'Query');
    } finally {
      await production.close();
    }
    const on = await startServer('listen', { production: true, graphqlIntrospection: true });
    try {
      assert.ok((await data(on, '{ __schema { queryType { name } } }')).__schema);
    } finally {
      await on.close();
    }
    const development = await startServer('listen');
    try {
      assert.equal((await data(development, '{ __type(name: "Product") { name } }')).__type.name, 'Product');
    } finally {
      await development.close();
    }
  });

  it('persisted queries: a registered query by its hash alone (POST and GET), an unknown hash, a hash that is not the query’s', async () => {
    const query = 'query Named { products(first: 1) { edges { node { id } } } }';
    const file = join(dir, 'persisted.json');
    writeFileSync(file, JSON.stringify({ [queryHash(query)]: query }));
    const server = await startServer('listen', { graphqlPersistedQueries: file });
    try {
      const extensions = { persistedQuery: { version: 1, sha256Hash: queryHash(query) } };
      const posted = await server.request('POST', '/graphql', { body: { extensions } });
      assert.equal(posted.status, 200, posted.text);
      assert.ok(Array.isArray(posted.body.data.products.edges));
      const got = await server.request('GET', `/graphql?extensions=${encodeURIComponent(JSON.stringify(extensions))}`);
      assert.deepEqual(got.body, posted.body);
      const unknown = await server.request('POST', '/graphql', {
        body: { extensions: { persistedQuery: { version: 1, sha256Hash: queryHash('{ other }') } } },
        headers: { accept: 'application/graphql-response+json' },
      });
      assert.equal(unknown.status, 400);
      assert.deepEqual(JSON.parse(unknown.text).errors[0].extensions, { code: 'PERSISTED_QUERY_NOT_FOUND' });
      assert.equal(JSON.parse(unknown.text).errors[0].message, 'PersistedQueryNotFound', 'the message Apollo clients look for');
      // With the query sent too, it runs when the hash is its own.
      const both = await server.request('POST', '/graphql', {
        body: { query: '{ __typename }', extensions: { persistedQuery: { version: 1, sha256Hash: queryHash('{ __typename }') } } },
      });
      assert.deepEqual(both.body, { data: { __typename: 'Query' } });
      const mismatch = await server.request('POST', '/graphql', { body: { query: '{ __typename }', extensions } });
      assert.equal(mismatch.body.errors[0].extensions.code, 'BAD_REQUEST');
    } finally {
      await server.close();
    }
    writeFileSync(file, JSON.stringify({ [queryHash('{ a }')]: '{ b }' }));
    await assert.rejects(startServer('listen', { graphqlPersistedQueries: file }), /not the SHA-256 of its query/);
  });
});
