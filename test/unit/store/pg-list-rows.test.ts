// PostgreSQL's shared list rows (PgOps.list `kept`): a row read again under one snapshot is the record read before, frozen; a commit anywhere, ours, another connection's or a change by hand, makes the next shared read show the row as it is now.
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import pg from 'pg';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { PgStore } from '../../../src/store/postgres/pg-store.js';
import type { ListQuery, StoredRecord } from '../../../src/store/types.js';
import { idPage, productRow, rowId } from '../../support/list-rows.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../../support/pg.js';

const model = compileModel(withPlatform(commerce));
const uuid = rowId;
/** Two statuses in turn, prices with ties. */
const product = (i: number): StoredRecord => productRow(i, { price: { amount: 100 + ((i * 37) % 50), currency: 'EUR' }, status: ['active', 'draft'][i % 2]! });
const page = idPage;

for (const listCache of [true, false]) {
  describe(`PostgreSQL shared list rows (list cache ${listCache ? 'on' : 'off'})`, { skip: PG_SKIP }, () => {
    let database: TestDatabase;
    let store: PgStore;
    let other: pg.Client;

    /** The cluster's snapshot as another connection reads it: equal before and after means nothing committed anywhere. */
    const snapshot = async (): Promise<string> => String((await other.query('SELECT txid_current_snapshot()::text AS s')).rows[0].s);

    before(async () => {
      database = await createTestDatabase();
      store = new PgStore({ connectionString: database.url, max: 4, listCache, listRowsAfterMs: 0 });
      await store.migrate(model);
      other = new pg.Client({ connectionString: database.url });
      await other.connect();
      await store.transaction((tx) =>
        tx.insertMany(
          'products',
          Array.from({ length: 30 }, (_, i) => product(i)),
        ),
      );
    });
    after(async () => {
      await other?.end();
      await store?.close();
      await database?.drop();
    });

    it('a row two shared pages read under one snapshot both hold is one frozen record (rows are kept only with the list cache, whose snapshot read vouches for them)', async (t: TestContext) => {
      // Other suites commit to the same cluster (CI): a hit is required only when nothing committed meanwhile.
      for (let attempt = 0; attempt < 50; attempt++) {
        const start = await snapshot();
        const a = await store.list('products', { ...page(0), shared: true });
        const b = await store.list('products', { ...page(3), shared: true });
        const still = (await snapshot()) === start;
        assert.equal(b.rows[0]!.id, a.rows[3]!.id);
        assert.deepEqual(b.rows[0], a.rows[3]);
        if (!listCache) {
          assert.notEqual(b.rows[0], a.rows[3], 'no snapshot is read without the list cache: nothing vouches for a kept row');
          return;
        }
        assert.ok(Object.isFrozen(b.rows[0]) && Object.isFrozen(b.rows[0]!.price) && Object.isFrozen(b.rows[0]!.tags), 'shared rows are frozen');
        if (b.rows[0] === a.rows[3]) return;
        assert.equal(still, false, 'the snapshot held, yet the row was decoded again');
      }
      t.diagnostic('the cluster was never quiet for one attempt in 50: no hit required, none wrong');
    });

    it('with the rows kept, a page selects ids, versions and update times alone, and reads by id only the rows not kept', async (t: TestContext) => {
      if (!listCache) return;
      const texts: string[] = [];
      const query = pg.Client.prototype.query;
      // Every statement any client of the store sends, as text (named statements included).
      t.mock.method(pg.Client.prototype, 'query', function (this: pg.Client, ...args: unknown[]) {
        const config = args[0] as string | { text?: string };
        texts.push(typeof config === 'string' ? config : String(config.text));
        return (query as (...a: unknown[]) => unknown).apply(this, args);
      });
      const narrow = (text: string): boolean => text.startsWith('SELECT "id", "version", "updated_at" FROM "products"');
      const byId = (text: string): boolean => text.includes('"products" WHERE id = ANY(');
      for (let attempt = 0; attempt < 50; attempt++) {
        // A store of its own each attempt: nothing kept by an earlier one (its snapshot may still hold).
        const fresh: PgStore = new PgStore({ connectionString: database.url, max: 2, listCache, listRowsAfterMs: 0 });
        try {
          await fresh.migrate(model);
          const start = await snapshot();
          await fresh.list('products', { ...page(0), limit: 10, shared: true });
          texts.length = 0;
          const allKept = await fresh.list('products', { ...page(2), limit: 5, shared: true });
          const allKeptTexts = texts.splice(0);
          const someKept = await fresh.list('products', { ...page(8), limit: 5, shared: true });
          const someKeptTexts = texts.splice(0);
          assert.deepEqual(allKept.rows, (await fresh.list('products', { ...page(2), limit: 5 })).rows);
          assert.deepEqual(someKept.rows, (await fresh.list('products', { ...page(8), limit: 5 })).rows);
          if ((await snapshot()) !== start) continue;
          assert.equal(allKeptTexts.filter(narrow).length, 1, allKeptTexts.join('\n'));
          assert.equal(allKeptTexts.filter(byId).length, 0, 'every row kept: nothing read by id');
          assert.equal(someKeptTexts.filter(narrow).length, 1, someKeptTexts.join('\n'));
          assert.equal(someKeptTexts.filter(byId).length, 1, `the three rows not kept, in one statement:\n${someKeptTexts.join('\n')}`);
          return;
        } finally {
          await fresh.close();
        }
      }
      t.diagnostic('the cluster was never quiet for one attempt in 50: the statements were not checked');
    });

    it('an unshared read decodes its own rows, unfrozen, equal to the shared ones', async () => {
      const shared = await store.list('products', { ...page(2), shared: true });
      const plain = await store.list('products', page(2));
      assert.deepEqual(plain.rows, shared.rows);
      assert.equal(Object.isFrozen(plain.rows[0]), false, 'a caller of an unshared read may change its rows');
    });

    it('the same rows, order and totals as a plain read, filtered, sorted and after a position', async () => {
      const byPrice = [
        { path: 'price.amount', desc: true },
        { path: 'id', desc: true },
      ];
      const active = [{ path: 'status', op: 'eq', value: 'active' }] as ListQuery['where'];
      const shapes: ListQuery[] = [
        page(7, { limit: 10, withTotal: true }),
        { where: active, orderBy: byPrice, limit: 6, offset: 2, withTotal: true },
        { where: active, orderBy: byPrice, limit: 6, after: [120, uuid(20)] },
        page(40, { limit: 10 }),
      ];
      for (const query of shapes) {
        // Twice shared: the second read finds the first's rows kept (when the snapshot held).
        await store.list('products', { ...query, shared: true });
        const shared = await store.list('products', { ...query, shared: true });
        const plain = await store.list('products', query);
        assert.deepEqual(shared.rows, plain.rows, JSON.stringify(query));
        assert.equal(shared.total, plain.total);
      }
    });

    it('our commit, another connection’s and a change by hand that keeps the version are each seen by the next shared read', async () => {
      const before = (await store.list('products', { ...page(10), shared: true })).rows[1]!;
      await store.transaction((tx) => tx.update('products', { ...before, version: before.version + 1, name: 'changed by us' }));
      const ours = (await store.list('products', { ...page(11), shared: true })).rows[0]!;
      assert.deepEqual([ours.name, ours.version], ['changed by us', before.version + 1]);
      await other.query('UPDATE products SET name = $1, version = version + 1 WHERE id = $2', ['changed by another connection', ours.id]);
      const theirs = (await store.list('products', { ...page(11), shared: true })).rows[0]!;
      assert.deepEqual([theirs.name, theirs.version], ['changed by another connection', ours.version + 1]);
      // Outside Canon, keeping the version and update time: the snapshot alone tells.
      await other.query('UPDATE products SET name = $1 WHERE id = $2', ['changed by hand', ours.id]);
      assert.equal((await store.list('products', { ...page(11), shared: true })).rows[0]!.name, 'changed by hand');
      assert.equal((await store.list('products', { ...page(10), shared: true })).rows[1]!.name, 'changed by hand');
    });
  });
}
