// GraphQL's answer cache (src/graphql/answer-cache.ts) through HTTP: kept answers are byte for byte the computed ones, per caller and variables, and never outlive a commit — ours, another connection's, another process's.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, prepare } from '../../../src/store/sqlite/native-handles.js';
import { ADMIN_KEY, GENEROUS_LIMITS, MODES, createCustomer, createProduct, startServer, type TestServer } from '../../support/harness.js';
import { countReads } from './support.js';

const JSON_TYPE = { 'content-type': 'application/json' };

interface Raw {
  status: number;
  text: string;
}

/** One POST /graphql through the socket, its body as sent (the cache keeps text, so text is compared). */
async function post(server: TestServer, query: string, variables?: Record<string, unknown>, key: string = ADMIN_KEY): Promise<Raw> {
  const res = await fetch(`${server.baseUrl}/graphql`, {
    method: 'POST',
    headers: { ...JSON_TYPE, 'x-api-key': key },
    body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
  });
  return { status: res.status, text: await res.text() };
}

/**
 * Asks until the answer comes from the cache (kept on the second ask, given on the third, unless a commit came
 * between: PostgreSQL's event stamper commits just after a write's answer), at most ten times; every answer must
 * be the same text. Returns it and how many answers came from the cache (on SQLite, one).
 */
async function untilKept(server: TestServer, query: string, variables?: Record<string, unknown>, key?: string): Promise<{ text: string; hits: number }> {
  const before = server.app.graphqlAnswers.hits;
  let text: string | undefined;
  for (let i = 0; i < 10 && server.app.graphqlAnswers.hits === before; i++) {
    const res = await post(server, query, variables, key);
    assert.equal(res.status, 200, res.text);
    if (text !== undefined) assert.equal(res.text, text);
    text = res.text;
  }
  const hits = server.app.graphqlAnswers.hits - before;
  // PostgreSQL's stamp is the cluster's snapshot: any transaction in any database of the server moves it (the other
  // suites' databases, in CI), so there an answer may never be kept; what must hold is that none is ever wrong.
  if (server.mode.endsWith('/postgres')) assert.ok(hits <= 1);
  else assert.equal(hits, 1, 'never answered from the cache');
  return { text: text!, hits };
}

const ONE = 'query One($id: ID!) { product(id: $id) { id name price { amount currency } } }';
const PAGE = '{ products(first: 5, sort: "name") { edges { cursor node { id name } } pageInfo { hasNextPage endCursor } } }';

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  const postgres = mode.endsWith('/postgres');
  describe(`GraphQL answer cache (${mode})`, () => {
    let server: TestServer;
    let sqliteFile: string | undefined;
    before(async () => {
      // A file, not memory, on SQLite: the last test writes through a second connection, as another process would.
      sqliteFile = postgres ? undefined : path.join(mkdtempSync(path.join(tmpdir(), 'canon-answer-cache-')), 'canon.db');
      server = await startServer(mode, { worker: 'off', ...(sqliteFile ? { databaseUrl: `sqlite:${sqliteFile}` } : {}) });
      for (const name of ['Anvil', 'Bellows', 'Chisel']) await createProduct(server, { name });
    });
    after(async () => {
      await server.close();
    });

    it('a query asked again is answered from the cache, byte for byte the computed answer, reading nothing from the store', async () => {
      const product = await createProduct(server, { name: 'Kept' });
      const { text } = await untilKept(server, ONE, { id: product.id });
      assert.deepEqual(JSON.parse(text).data.product, { id: product.id, name: 'Kept', price: { amount: 1000, currency: 'EUR' } });
      const reads = countReads(server.runtime.store);
      const hits = server.app.graphqlAnswers.hits;
      const again = await post(server, ONE, { id: product.id });
      const calls = reads.stop().calls;
      assert.equal(again.text, text);
      // Unless a commit came between (then it was computed, and read).
      if (server.app.graphqlAnswers.hits === hits + 1) assert.deepEqual(calls, []);
      await untilKept(server, PAGE);
    });

    it('a write through REST or a GraphQL mutation: the next answer is computed from the data as it is now', async () => {
      const product = await createProduct(server, { name: 'Before' });
      await untilKept(server, ONE, { id: product.id });
      const patched = await server.request('PATCH', `/v2/products/${product.id}`, { body: { name: 'After REST' } });
      assert.equal(patched.status, 200, patched.text);
      const hits = server.app.graphqlAnswers.hits;
      assert.equal(JSON.parse((await post(server, ONE, { id: product.id })).text).data.product.name, 'After REST');
      assert.equal(server.app.graphqlAnswers.hits, hits);
      await untilKept(server, ONE, { id: product.id });
      const renamed = await post(server, `mutation { updateProduct(id: "${product.id}", input: { name: "After GraphQL" }) { id } }`);
      assert.equal(renamed.status, 200, renamed.text);
      assert.equal(JSON.parse((await post(server, ONE, { id: product.id })).text).data.product.name, 'After GraphQL');
      // A write to anything else empties it too: one stamp for all the data.
      await untilKept(server, ONE, { id: product.id });
      await createProduct(server, { name: 'Unrelated' });
      const before = server.app.graphqlAnswers.hits;
      await post(server, ONE, { id: product.id });
      assert.equal(server.app.graphqlAnswers.hits, before);
    });

    it('each caller has its own answers: a customer never receives what another caller was answered', async () => {
      const ann = await createCustomer(server, `ann-cache-${mode}@example.com`);
      const ben = await createCustomer(server, `ben-cache-${mode}@example.com`);
      const annOrder = (await server.request('POST', '/v2/orders', { key: ann.key, body: {} })).body.id as string;
      const benOrder = (await server.request('POST', '/v2/orders', { key: ben.key, body: {} })).body.id as string;
      const orders = '{ orders(first: 50) { edges { node { id userId } } } }';
      const ids = (text: string): string[] => JSON.parse(text).data.orders.edges.map((e: { node: { id: string } }) => e.node.id);
      const admin = await untilKept(server, orders);
      assert.ok(ids(admin.text).includes(annOrder) && ids(admin.text).includes(benOrder));
      assert.deepEqual(ids((await untilKept(server, orders, undefined, ann.key)).text), [annOrder]);
      assert.deepEqual(ids((await untilKept(server, orders, undefined, ben.key)).text), [benOrder]);
      // Ben asking for Ann's order by id is refused every time, however often Ann asked for it.
      const one = `{ order(id: "${annOrder}") { id } }`;
      await untilKept(server, one, undefined, ann.key);
      for (let i = 0; i < 3; i++) {
        const res = JSON.parse((await post(server, one, undefined, ben.key)).text);
        assert.equal(res.errors?.[0]?.extensions.code, 'NOT_FOUND', JSON.stringify(res));
      }
    });

    it('variables and operation names are part of the key; answers with errors are never kept', async () => {
      const a = await createProduct(server, { name: 'Variable A' });
      const b = await createProduct(server, { name: 'Variable B' });
      assert.equal(JSON.parse((await untilKept(server, ONE, { id: a.id })).text).data.product.name, 'Variable A');
      assert.equal(JSON.parse((await untilKept(server, ONE, { id: b.id })).text).data.product.name, 'Variable B');
      const two = 'query A { product(id: "' + a.id + '") { name } } query B { product(id: "' + b.id + '") { name } }';
      for (const [operationName, name] of [
        ['A', 'Variable A'],
        ['B', 'Variable B'],
        ['A', 'Variable A'],
        ['B', 'Variable B'],
        ['A', 'Variable A'],
      ] as const) {
        const res = await fetch(`${server.baseUrl}/graphql`, {
          method: 'POST',
          headers: { ...JSON_TYPE, 'x-api-key': ADMIN_KEY },
          body: JSON.stringify({ query: two, operationName }),
        });
        assert.equal(((await res.json()) as { data: { product: { name: string } } }).data.product.name, name);
      }
      const missing = { id: '00000000-0000-7000-8000-000000000000' };
      const kept = server.app.graphqlAnswers.kept;
      for (let i = 0; i < 3; i++) assert.equal(JSON.parse((await post(server, ONE, missing)).text).errors[0].extensions.code, 'NOT_FOUND');
      assert.equal(server.app.graphqlAnswers.kept, kept);
    });

    it('another connection’s commit (another process) is seen by the next request', async () => {
      const product = await createProduct(server, { name: 'Elsewhere' });
      await untilKept(server, ONE, { id: product.id });
      if (postgres) {
        const client = new pg.Client({ connectionString: server.runtime.config.databaseUrl });
        await client.connect();
        try {
          await client.query(`UPDATE products SET name = 'Changed elsewhere' WHERE id = $1`, [product.id]);
        } finally {
          await client.end();
        }
      } else {
        const other = openDatabase(sqliteFile!);
        try {
          prepare(other, `UPDATE products SET name = 'Changed elsewhere' WHERE id = ?`).run(product.id);
        } finally {
          other.close();
        }
      }
      assert.equal(JSON.parse((await post(server, ONE, { id: product.id })).text).data.product.name, 'Changed elsewhere');
    });
  });
}

describe('GraphQL answer cache: the rate limit and the switch', () => {
  it('an answer from the cache is charged as the operation is: the limit refuses it all the same', async () => {
    const server = await startServer('listen', { rateLimits: { ...GENEROUS_LIMITS, perPrincipal: { limit: 4, periodSeconds: 3600 } }, worker: 'off' });
    try {
      const product = await createProduct(server, { name: 'Charged' });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await post(server, ONE, { id: product.id })).status);
      // The product's creation was the first of the four requests.
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      assert.equal(server.app.graphqlAnswers.hits, 1);
    } finally {
      await server.close();
    }
  });

  it('CANON_GRAPHQL_ANSWER_CACHE=off: every answer is computed', async () => {
    const server = await startServer('listen', { graphqlAnswerCache: false, worker: 'off' });
    try {
      const product = await createProduct(server, { name: 'Uncached' });
      const texts: string[] = [];
      for (let i = 0; i < 3; i++) texts.push((await post(server, ONE, { id: product.id })).text);
      assert.deepEqual([server.app.graphqlAnswers.hits, server.app.graphqlAnswers.kept], [0, 0]);
      assert.equal(texts[2], texts[0]);
      const reads = countReads(server.runtime.store);
      await post(server, `{ products(first: 2) { edges { node { id } } } }`);
      assert.ok(reads.stop().count > 0);
    } finally {
      await server.close();
    }
  });
});
