// Batched loading (issue 29.4): 20 orders with their user, their items and each item's product run at most 4 statements, counted through the store, for an admin and for a customer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDatabase, prepare } from '../../../src/store/sqlite/native-handles.js';
import pg from 'pg';
import { createCustomer, createProduct, MODES, startServer, type TestServer } from '../../support/harness.js';
import { countReads, data, FIELDS } from './support.js';

const QUERY = `{ orders(first: 20, sort: "createdAt") { edges { node { id user { ${FIELDS.users} } items { ${FIELDS.orderItems} product { ${FIELDS.products} } } } } } }`;

/**
 * A SQLite page tried by its rows' versions first (`SqliteOps.keptPage`, when its rows may all be kept): on a miss the
 * page is then read whole, two statements for one read of one page — whether it misses depends on when the kept
 * rows' 50-ms gate opened, not on batching.
 */
const VERSIONS_PROBE = /^SELECT id, version, updated_at FROM /;

/**
 * Statements the database driver runs from now on, whoever sends them (SQLite: every statement this process
 * executes), and how many of them were versions probes.
 */
function countDriver(mode: string): () => { count: number; probes: number } {
  let count = 0;
  let probes = 0;
  const patched: Array<[object, string, unknown]> = [];
  const wrap = (proto: Record<string, unknown>, name: string): void => {
    const original = proto[name] as (...args: unknown[]) => unknown;
    patched.push([proto, name, original]);
    proto[name] = function (this: { source?: unknown }, ...args: unknown[]) {
      count++;
      if (typeof this.source === 'string' && VERSIONS_PROBE.test(this.source)) probes++;
      return original.apply(this, args);
    };
  };
  if (mode.endsWith('/postgres')) wrap(pg.Client.prototype as unknown as Record<string, unknown>, 'query');
  else {
    // Through openDatabase and prepare, which keep both reachable: on Node 24 a better-sqlite3 database or statement
    // destroyed by garbage collection aborts the process (src/store/sqlite/native-handles.ts); the database did once
    // in CI, and the statement, prepared directly, did on 2026-11-28 (Statement::~Statement at exit).
    const probe = openDatabase(':memory:');
    const statement = Object.getPrototypeOf(prepare(probe, 'SELECT 1')) as Record<string, unknown>;
    probe.close();
    for (const name of ['all', 'get', 'run', 'iterate']) wrap(statement, name);
  }
  return () => {
    for (const [proto, name, original] of patched) (proto as Record<string, unknown>)[name] = original;
    return { count, probes };
  };
}

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`batched loading (${mode})`, () => {
    let server: TestServer;
    const customers: Array<{ userId: string; key: string }> = [];

    before(async () => {
      // No embedded worker: its polls (operations, deliveries) would be counted with the query's reads.
      server = await startServer(mode, { worker: 'off' });
      const products: string[] = [];
      for (let i = 0; i < 10; i++) products.push((await createProduct(server, { name: `Batched ${i}` })).id as string);
      for (let c = 0; c < 5; c++) customers.push(await createCustomer(server, `batched-${c}@example.com`));
      for (let o = 0; o < 20; o++) {
        const customer = customers[o % 5]!;
        const order = await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
        for (const p of [products[o % 10], products[(o + 3) % 10]]) {
          const item = await server.request('POST', `/v2/orders/${order.body.id}/order-items`, { key: customer.key, body: { product_id: p, quantity: 1 } });
          assert.equal(item.status, 201, item.text);
        }
      }
    });
    after(async () => server.close());

    for (const who of ['admin', 'customer'] as const) {
      it(`${who}: 20 orders with user, items and products in at most 4 statements, answered as REST answers each`, async (t) => {
        const key = who === 'admin' ? undefined : customers[0]!.key;
        // Warm: the credential is cached, so what is counted below is the query's own reading.
        await data(server, '{ __typename }', undefined, { key });
        const reads = countReads(server.runtime.store);
        const driver = countDriver(mode);
        let answer;
        try {
          answer = await data(server, QUERY, undefined, { key });
        } finally {
          const statements = driver();
          const { count, calls } = reads.stop();
          t.diagnostic(`${who}: ${count} store reads (${calls.join(', ')}); ${statements.count} statements at the driver (${statements.probes} versions probes)`);
          assert.ok(count <= 4, `${count} reads: ${calls.join(', ')}`);
          // SQLite runs in this process: the driver's count is every statement (the key's epoch is in memory). PostgreSQL's also
          // holds the per-request credentials-epoch read, the list cache's snapshot read and the stream hub's polls.
          // The one list (orders) may be tried by its versions first: at most one probe, beside at most 4 reads.
          if (!mode.endsWith('/postgres')) {
            assert.ok(statements.probes <= 1, `${statements.probes} versions probes`);
            assert.ok(statements.count - statements.probes <= 4, `${statements.count} statements at the driver, ${statements.probes} of them versions probes`);
          }
        }
        const orders = answer.orders.edges.map((e: { node: { id: string; user: { id: string }; items: Array<{ orderId: string; product: { id: string } }> } }) => e.node);
        assert.equal(orders.length, who === 'admin' ? 20 : 4);
        for (const order of orders.slice(0, 3)) {
          const rest = await server.request('GET', `/v2/orders/${order.id}/order-items`, { ...(key ? { key } : {}) });
          assert.deepEqual(
            order.items.map((i: { id: string }) => i.id),
            rest.body.data.map((i: { id: string }) => i.id),
          );
          assert.equal(order.items.length, 2);
          for (const item of order.items) assert.equal(item.orderId, order.id);
        }
        if (who === 'customer') for (const order of orders) assert.equal(order.user.id, customers[0]!.userId);
      });
    }
  });
}
