// The kept counts of both stores (src/store/postgres/row-counts.ts, src/store/sqlite/row-counts.ts): an offset page's total read from trigger-kept counts equals COUNT(*) after our writes, concurrent writers, changes by hand (PostgreSQL: a replica session and TRUNCATE; SQLite: DELETE of every row), and a start that sets the counts up again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { PgStore } from '../../../src/store/postgres/pg-store.js';
import { openDatabase } from '../../../src/store/sqlite/native-handles.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { Condition, Store, StoredRecord } from '../../../src/store/types.js';
import { productRow, rowId } from '../../support/list-rows.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../../support/pg.js';

const model = compileModel(withPlatform(commerce));
const STATUSES = ['active', 'draft', 'archived'];
const product = (i: number): StoredRecord => productRow(i, { status: STATUSES[i % 3]!, price: { amount: 100 + i, currency: 'EUR' } });

/** Every filter whose total the counts answer, and two they do not (COUNT(*) then). */
const FILTERS: Array<{ name: string; where: Condition[]; counted: boolean; sql: string }> = [
  { name: 'no filter', where: [], counted: true, sql: 'TRUE' },
  ...STATUSES.map((s) => ({ name: `status=${s}`, where: [{ path: 'status', op: 'eq', value: s }] as Condition[], counted: true, sql: `status = '${s}'` })),
  { name: 'status in', where: [{ path: 'status', op: 'in', value: ['active', 'archived', 'active'] }], counted: true, sql: `status IN ('active', 'archived')` },
  { name: 'price (not counted)', where: [{ path: 'price.amount', op: 'gte', value: 110 }], counted: false, sql: 'price_amount >= 110' },
  {
    name: 'status and price (not counted)',
    where: [
      { path: 'status', op: 'eq', value: 'draft' },
      { path: 'price.amount', op: 'lt', value: 120 },
    ],
    counted: false,
    sql: `status = 'draft' AND price_amount < 120`,
  },
];

/** One store kind: its stores on one database, and another connection to it for changes by hand. */
interface Backend {
  name: string;
  skip: string | false;
  /** Sets up the database; returns how to open a store on it (no list cache: every total is read, none kept per snapshot). */
  setUp(): Promise<() => Store>;
  /** Runs SQL on the other connection: its rows. */
  byHand(sql: string): Promise<Array<Record<string, unknown>>>;
  /** The statements of a transaction by hand. */
  begin: string;
  tearDown(): Promise<void>;
  /** What empties the table by hand (TRUNCATE has no SQLite form: DELETE without WHERE). */
  emptyAll: string;
  /** Adds `by` to one row of each of the keys (PostgreSQL keeps several rows per key: one slot of them). */
  skew(keys: string, by: number): string;
}

function postgresBackend(): Backend {
  let database: TestDatabase;
  let other: pg.Client;
  const slot = `(SELECT min(slot) FROM canon_counts WHERE table_name = 'products' AND key = '')`;
  return {
    name: 'PostgreSQL',
    skip: PG_SKIP,
    begin: 'BEGIN',
    emptyAll: 'TRUNCATE products CASCADE',
    skew: (keys, by) => `UPDATE canon_counts SET n = n + ${by} WHERE table_name = 'products' AND key IN (${keys}) AND slot = ${slot}`,
    async setUp() {
      database = await createTestDatabase();
      other = new pg.Client({ connectionString: database.url });
      await other.connect();
      return () => new PgStore({ connectionString: database.url, max: 4, listCache: false });
    },
    byHand: async (sql) => (await other.query(sql)).rows as Array<Record<string, unknown>>,
    async tearDown() {
      await other?.end();
      await database?.drop();
    },
  };
}

function sqliteBackend(): Backend {
  let dir: string;
  let other: ReturnType<typeof openDatabase>;
  return {
    name: 'SQLite',
    skip: false,
    begin: 'BEGIN IMMEDIATE',
    emptyAll: 'DELETE FROM products',
    skew: (keys, by) => `UPDATE canon_counts SET n = n + ${by} WHERE table_name = 'products' AND key IN (${keys})`,
    async setUp() {
      dir = mkdtempSync(path.join(tmpdir(), 'canon-row-counts-'));
      const file = path.join(dir, 'counts.db');
      const first = new SqliteStore({ path: file, listCache: false });
      await first.migrate(model);
      await first.close();
      other = openDatabase(file);
      other.pragma('busy_timeout = 5000');
      return () => new SqliteStore({ path: file, listCache: false });
    },
    async byHand(sql) {
      const statement = other.prepare(sql);
      return statement.reader ? (statement.all() as Array<Record<string, unknown>>) : (statement.run(), []);
    },
    async tearDown() {
      other?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

for (const backend of [postgresBackend(), sqliteBackend()])
  describe(`${backend.name} kept counts`, { skip: backend.skip }, () => {
    let open: () => Store;
    let store: Store;
    let next = 0;
    const { byHand } = backend;

    const total = async (s: Store, where: Condition[]): Promise<number> =>
      (await s.list('products', { where, orderBy: [{ path: 'id', desc: false }], limit: 1, offset: 0, withTotal: true })).total!;
    const counted = async (sql: string): Promise<number> => Number((await byHand(`SELECT COUNT(*) AS n FROM products WHERE ${sql}`))[0]!.n);

    /** Every filter's total as the store gives it equals COUNT(*) as another connection counts it. */
    const agree = async (when: string, s: Store = store): Promise<void> => {
      for (const f of FILTERS) assert.equal(await total(s, f.where), await counted(f.sql), `${f.name}, ${when}`);
    };

    before(async () => {
      open = await backend.setUp();
      store = open();
      await store.migrate(model);
    });
    after(async () => {
      await store?.close();
      await backend.tearDown();
    });

    it('the totals come from the counts: a count changed by hand shows in them, and COUNT(*) answers the filters not counted', async () => {
      await store.transaction((tx) =>
        tx.insertMany(
          'products',
          Array.from({ length: 30 }, () => product(next++)),
        ),
      );
      await agree('after a batch insert');
      await byHand(backend.skew(`'', 'status=draft'`, 1000));
      try {
        assert.equal(await total(store, []), (await counted('TRUE')) + 1000, 'the total is read from the kept counts');
        for (const f of FILTERS.filter((x) => !x.counted)) assert.equal(await total(store, f.where), await counted(f.sql), f.name);
      } finally {
        await byHand(backend.skew(`'', 'status=draft'`, -1000));
      }
      await agree('after the change by hand was undone');
    });

    it('creates, status changes, price changes and deletes through the store keep every total exact', async () => {
      const ids = Array.from({ length: 6 }, () => product(next++));
      for (const p of ids) await store.transaction((tx) => tx.insert('products', p));
      /** A status other than the product's own. */
      const otherStatus = (p: StoredRecord, step = 1): string => STATUSES[(STATUSES.indexOf(String(p.status)) + step) % 3]!;
      await store.transaction(async (tx) => {
        await tx.update('products', { ...ids[0]!, version: 2, status: otherStatus(ids[0]!) });
        await tx.update('products', { ...ids[1]!, version: 2, price: { amount: 5, currency: 'EUR' } });
        // Changed twice in one transaction: the counts follow each change.
        await tx.update('products', { ...ids[2]!, version: 2, status: otherStatus(ids[2]!) });
        await tx.update('products', { ...ids[2]!, version: 3, status: otherStatus(ids[2]!, 2) });
        await tx.delete('products', ids[3]!.id);
      });
      await agree('after writes through the store');
    });

    it('a page carries its total in its own statement; an empty page, past the end or of a filter nothing matches, still has the right one', async () => {
      const page = (where: Condition[], offset: number) => store.list('products', { where, orderBy: [{ path: 'id', desc: false }], limit: 5, offset, withTotal: true });
      // Counted filters and the others (PostgreSQL: the kept counts' sum or the filter's COUNT(*), a column of the page's statement either way).
      for (const f of FILTERS) {
        const all = await counted(f.sql);
        assert.ok(all >= 3, `${f.name} matches ${all}`);
        const first = await page(f.where, 0);
        assert.deepEqual([first.rows.length, first.total], [Math.min(5, all), all], f.name);
        const last = await page(f.where, all - 2);
        assert.deepEqual([last.rows.length, last.total], [2, all], f.name);
        const past = await page(f.where, all + 10);
        assert.deepEqual([past.rows.length, past.total], [0, all], f.name);
      }
      const none = [{ path: 'status', op: 'in', value: ['nothing has this status'] }] as Condition[];
      assert.deepEqual([(await page(none, 0)).rows.length, (await page(none, 0)).total], [0, 0]);
      assert.deepEqual([(await page(none, 3)).rows.length, (await page(none, 3)).total], [0, 0]);
    });

    it('a transaction counts its own writes', async () => {
      const before = await counted(`status = 'draft'`);
      await store.transaction(async (tx) => {
        await tx.insert('products', { ...product(next++), status: 'draft' });
        const { total: inside } = await tx.list('products', {
          where: [{ path: 'status', op: 'eq', value: 'draft' }],
          orderBy: [{ path: 'id', desc: false }],
          limit: 1,
          offset: 0,
          withTotal: true,
        });
        assert.equal(inside, before + 1);
      });
      await agree('after the transaction');
    });

    it('changes by hand are counted: inserts, updates, deletes, a rolled-back transaction, emptying the table (PostgreSQL: a replica session too)', async () => {
      const row = (i: number, status: string | null): string =>
        `('${rowId(i)}', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'hand ${i}', ${status === null ? 'NULL' : `'${status}'`}, ${100 + i}, 'EUR')`;
      const insert = (values: string[]): string =>
        `INSERT INTO products (id, version, created_at, updated_at, name, status, price_amount, price_currency) VALUES ${values.join(', ')}`;
      await byHand(insert([row(next++, 'active'), row(next++, 'draft'), row(next++, null)]));
      await agree('after a multi-row insert by hand, a null status among them');
      await byHand(
        `UPDATE products SET status = CASE status WHEN 'active' THEN 'archived' WHEN 'archived' THEN 'draft' ELSE 'active' END WHERE name LIKE 'p%' AND price_amount % 2 = 0`,
      );
      await agree('after a many-row status update by hand');
      await byHand(`UPDATE products SET status = NULL WHERE name = 'hand ${next - 3}'`);
      await byHand(`UPDATE products SET price_amount = price_amount + 1`);
      await agree('after a status set to null and a price-only update');
      await byHand(`DELETE FROM products WHERE price_amount % 5 = 0`);
      await agree('after a many-row delete by hand');
      await byHand(backend.begin);
      await byHand(insert([row(next++, 'active')]));
      await byHand('ROLLBACK');
      await agree('after a rolled-back insert');
      if (backend.name === 'PostgreSQL') {
        // Logical replication's apply workers write in replica sessions, where ordinary triggers do not fire.
        await byHand(`SET session_replication_role = replica`);
        try {
          await byHand(insert([row(next++, 'archived')]));
        } finally {
          await byHand(`SET session_replication_role = DEFAULT`);
        }
        await agree('after an insert in a replica session');
      }
      await byHand(backend.emptyAll);
      await agree('after emptying the table');
      assert.equal(await total(store, []), 0);
      await byHand(insert([row(next++, 'draft')]));
      await agree('after an insert into the emptied table');
    });

    it('concurrent writers in two processes keep every total exact', async () => {
      const second = open();
      await second.migrate(model);
      try {
        const seeds = Array.from({ length: 40 }, () => product(next++));
        await Promise.all(seeds.map((p, i) => (i % 2 ? store : second).transaction((tx) => tx.insert('products', p))));
        await Promise.all(
          seeds.map((p, i) =>
            (i % 2 ? second : store).transaction(async (tx) => {
              if (i % 4 === 0) await tx.delete('products', p.id);
              else await tx.update('products', { ...p, version: 2, status: STATUSES[(i + 1) % 3]! });
            }),
          ),
        );
        await agree('after 80 concurrent transactions from two stores');
        await agree('as the second process reads them', second);
      } finally {
        await second.close();
      }
    });

    it('a start keeps the counts it finds, and sets them up again when what they were made for changed', async () => {
      await store.transaction((tx) =>
        tx.insertMany(
          'products',
          Array.from({ length: 9 }, () => product(next++)),
        ),
      );
      const meta = async (): Promise<string> => String((await byHand(`SELECT value FROM canon_meta WHERE key = 'counts:products'`))[0]!.value);
      const signature = await meta();
      const restarted = open();
      await restarted.migrate(model);
      await restarted.close();
      assert.equal(await meta(), signature);
      await agree('after a second start');
      // Counts made for other columns (an earlier model) and wrong now: the next start counts again.
      await byHand(`UPDATE canon_meta SET value = 'v0:' WHERE key = 'counts:products'`);
      await byHand(`UPDATE canon_counts SET n = n + 7 WHERE table_name = 'products'`);
      const upgraded = open();
      await upgraded.migrate(model);
      try {
        assert.equal(await meta(), signature);
        await agree('after a start that set the counts up again', upgraded);
      } finally {
        await upgraded.close();
      }
    });
  });
