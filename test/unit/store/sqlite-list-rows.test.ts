// SQLite's shared list rows (SqliteOps.list `kept`): a row read again under one change stamp is the record read before, frozen; a commit, ours or another connection's, makes the next read decode it anew.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { openDatabase, prepare } from '../../../src/store/sqlite/native-handles.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { ListQuery, StoredRecord } from '../../../src/store/types.js';
import { idPage, productRow, rowId } from '../../support/list-rows.js';

const model = compileModel(withPlatform(commerce));
const uuid = rowId;
const product = (i: number): StoredRecord => productRow(i);
const page = idPage;

for (const listCache of [true, false]) {
  describe(`SQLite shared list rows (list cache ${listCache ? 'on' : 'off'})`, () => {
    let dir: string;
    let file: string;
    let store: SqliteStore;
    let other: SqliteStore;
    before(async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'canon-list-rows-'));
      file = path.join(dir, 'rows.db');
      store = new SqliteStore({ path: file, listCache, listRowsAfterMs: 0 });
      await store.migrate(model);
      // Another connection to the file, as another process would hold.
      other = new SqliteStore({ path: file, listCache, listRowsAfterMs: 0 });
      await other.migrate(model);
      await store.transaction((tx) =>
        tx.insertMany(
          'products',
          Array.from({ length: 12 }, (_, i) => product(i)),
        ),
      );
    });
    after(async () => {
      await other?.close();
      await store?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('a row two shared pages both hold is one frozen record; an unshared read decodes its own, unfrozen', async () => {
      const a = await store.list('products', { ...page(0), shared: true });
      const b = await store.list('products', { ...page(3), shared: true });
      assert.equal(b.rows[0]!.id, a.rows[3]!.id);
      assert.equal(b.rows[0], a.rows[3], 'the record read by the first page');
      assert.ok(Object.isFrozen(b.rows[0]) && Object.isFrozen(b.rows[0]!.price) && Object.isFrozen(b.rows[0]!.tags));
      const plain = await store.list('products', page(3));
      assert.notEqual(plain.rows[0], a.rows[3]);
      assert.deepEqual(plain.rows[0], a.rows[3]);
      assert.equal(Object.isFrozen(plain.rows[0]), false, 'a caller of an unshared read may change its rows');
    });

    it('our commit, and another connection’s, make the next shared read show the row as it is now', async () => {
      const before = (await store.list('products', { ...page(0), shared: true })).rows[1]!;
      await store.transaction((tx) => tx.update('products', { ...before, version: before.version + 1, name: 'changed by us' }));
      const ours = (await store.list('products', { ...page(1), shared: true })).rows[0]!;
      assert.equal(ours.name, 'changed by us');
      assert.equal(ours.version, before.version + 1);
      await other.transaction((tx) => tx.update('products', { ...ours, version: ours.version + 1, name: 'changed by another connection' }));
      // Another connection's commit is seen from the next event-loop turn (SqliteStore.changeStamp).
      await new Promise((resolve) => setImmediate(resolve));
      const theirs = (await store.list('products', { ...page(1), shared: true })).rows[0]!;
      assert.equal(theirs.name, 'changed by another connection');
      assert.equal(theirs.version, ours.version + 1);
      // A change that keeps the version and update time (SQL by hand, outside Canon): the change stamp alone tells.
      // Opened as the store opens its own (the binding CI's Node 24 suite names; statements kept reachable).
      const raw = openDatabase(file);
      try {
        prepare(raw, 'UPDATE products SET name = ? WHERE id = ?').run('changed by hand', theirs.id);
      } finally {
        raw.close();
      }
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal((await store.list('products', { ...page(1), shared: true })).rows[0]!.name, 'changed by hand');
    });

    it('rows are kept only once the change stamp has held LIST_ROWS_AFTER_MS (under a stream of commits, never)', async () => {
      const paced = new SqliteStore({ path: file, listCache, listRowsAfterMs: 500 });
      try {
        await paced.migrate(model);
        const row = (await paced.list('products', { ...page(0), shared: true })).rows[0]!;
        await paced.transaction((tx) => tx.update('products', { ...row, version: row.version + 1, name: 'just committed' }));
        const first = await paced.list('products', { ...page(0), shared: true });
        const second = await paced.list('products', { ...page(1), shared: true });
        assert.notEqual(second.rows[0], first.rows[1], 'the stamp has just moved: nothing kept');
        assert.equal(Object.isFrozen(first.rows[1]), false);
        await new Promise((resolve) => setTimeout(resolve, 600));
        const a = await paced.list('products', { ...page(0), shared: true });
        const b = await paced.list('products', { ...page(1), shared: true });
        assert.equal(b.rows[0], a.rows[1], 'the stamp has held: rows kept');
        assert.equal(a.rows[0]!.name, 'just committed');
      } finally {
        await paced.close();
      }
    });
  });
}

/** Product i of a larger collection: three statuses, prices with ties, names out of id order. */
const varied = (i: number): StoredRecord => ({
  ...product(i),
  name: `n${(i * 7919) % 1040}`,
  price: { amount: 100 + ((i * 37) % 250), currency: 'EUR' },
  status: ['active', 'draft', 'archived'][i % 3]!,
});

for (const listCache of [true, false]) {
  describe(`SQLite pages of kept rows read by their rowids alone (list cache ${listCache ? 'on' : 'off'})`, () => {
    let dir: string;
    let file: string;
    let store: SqliteStore;
    before(async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'canon-kept-pages-'));
      file = path.join(dir, 'kept.db');
      store = new SqliteStore({ path: file, listCache, listRowsAfterMs: 0 });
      await store.migrate(model);
      await store.transaction((tx) =>
        tx.insertMany(
          'products',
          Array.from({ length: 1040 }, (_, i) => varied(i)),
        ),
      );
    });
    after(async () => {
      await store?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** Every row read once by shared pages (kept), then distinct one-row pages until a page is answered from kept rows alone. */
    async function keepEverything(): Promise<void> {
      for (let offset = 0; offset < 1040; offset += 100) await store.list('products', { ...page(offset), limit: 100, shared: true });
      for (let i = 0; i < 40; i++) {
        const before = store.sharedPages.kept;
        await store.list('products', { ...page(i), limit: 1, shared: true });
        if (store.sharedPages.kept > before) return;
      }
      assert.fail('no shared page was answered from kept rows after every row was kept');
    }

    const byPrice = [
      { path: 'price.amount', desc: true },
      { path: 'id', desc: true },
    ];
    const active = [
      { path: 'status', op: 'eq', value: 'active' },
      { path: 'price.amount', op: 'gte', value: 200 },
    ] as ListQuery['where'];
    const shapes: Array<[string, ListQuery]> = [
      ['the first page', page(0, { limit: 20 })],
      ['an offset page with its total', page(517, { limit: 20, withTotal: true })],
      ['a deep offset page (deferred join)', page(1003, { limit: 20, withTotal: true })],
      ['the last, short page', page(1030, { limit: 20 })],
      ['a filtered page by price, descending', { where: active, orderBy: byPrice, limit: 20, offset: 40, withTotal: true }],
      ['a page after a position (keyset)', { where: active, orderBy: byPrice, limit: 20, after: [300, uuid(500)] }],
      [
        'a page by name',
        {
          where: [],
          orderBy: [
            { path: 'name', desc: false },
            { path: 'id', desc: false },
          ],
          limit: 20,
          offset: 333,
        },
      ],
      ['an empty page', page(2000, { limit: 20 })],
    ];

    it('give the rows a plain read gives, in its order, as the frozen records kept', async () => {
      await keepEverything();
      for (const [name, query] of shapes) {
        const plain = await store.list('products', query);
        const before = store.sharedPages;
        const shared = await store.list('products', { ...query, shared: true });
        assert.deepEqual(store.sharedPages, { kept: before.kept + 1, filled: before.filled, whole: before.whole }, `${name}: answered from kept rows`);
        assert.deepEqual(
          shared.rows.map((r) => r.id),
          plain.rows.map((r) => r.id),
          `${name}: the same rows in the same order`,
        );
        assert.deepEqual(shared.rows, plain.rows, `${name}: the same records`);
        assert.equal(shared.total, plain.total, `${name}: the same total`);
        assert.ok(
          shared.rows.every((r) => Object.isFrozen(r)),
          `${name}: kept records`,
        );
      }
    });

    it('a row our commit changed is read again by its rowid; every other row of the page is the record kept', async () => {
      await keepEverything();
      const kept = (await store.list('products', { ...page(3, { limit: 20 }), shared: true })).rows;
      const row = kept[0]!;
      await store.transaction((tx) => tx.update('products', { ...row, version: row.version + 1, name: 'changed' }));
      const before = store.sharedPages;
      const read = await store.list('products', { ...page(3, { limit: 20 }), shared: true });
      assert.equal(read.rows[0]!.name, 'changed');
      assert.equal(read.rows[0]!.version, row.version + 1);
      assert.ok(Object.isFrozen(read.rows[0]));
      for (let i = 1; i < 20; i++) assert.equal(read.rows[i], kept[i], `row ${i}: the record kept before the commit`);
      assert.deepEqual(store.sharedPages, { kept: before.kept, filled: before.filled + 1, whole: before.whole }, 'one row read by rowid');
      const again = await store.list('products', { ...page(2, { limit: 20 }), shared: true });
      assert.deepEqual(store.sharedPages, { kept: before.kept + 1, filled: before.filled + 1, whole: before.whole }, 'then every row is kept');
      assert.equal(again.rows[1], read.rows[0], 'the row read again is kept in turn');
      // A delete frees the row's rowid: the page no longer has it, and nothing kept answers for it.
      await store.transaction((tx) => tx.delete('products', row.id));
      const gone = await store.list('products', { ...page(2, { limit: 20 }), shared: true });
      assert.equal(
        gone.rows.find((r) => r.id === row.id),
        undefined,
      );
      assert.deepEqual(
        gone.rows.map((r) => r.id),
        (await store.list('products', page(2, { limit: 20 }))).rows.map((r) => r.id),
      );
      await store.transaction((tx) => tx.insert('products', { ...row, version: row.version + 2 }));
      const back = await store.list('products', { ...page(3, { limit: 1 }), shared: true });
      assert.equal(back.rows[0]!.version, row.version + 2, 'the row inserted again is read, not the record kept before its delete');
    });

    it('a row another connection changed within the turn (the record cache’s stamp not yet read again) is read again: each shared read asks for other processes’ commits', async () => {
      await keepEverything();
      await new Promise((resolve) => setImmediate(resolve));
      const before = store.sharedPages;
      // All in one synchronous turn: SqliteStore.changeStamp reads PRAGMA data_version once per turn for the record
      // cache, but a shared list asks again (listRowsNow), so the second page reads the changed row, even one whose
      // version did not move (SQL by hand).
      const first = store.list('products', { ...page(10, { limit: 5 }), shared: true });
      const raw = openDatabase(file);
      try {
        prepare(raw, 'UPDATE products SET name = ?, version = version + 1 WHERE id = ?').run('changed within the turn', uuid(12));
        prepare(raw, 'UPDATE products SET name = ? WHERE id = ?').run('changed by hand, same version', uuid(13));
      } finally {
        raw.close();
      }
      const second = store.list('products', { ...page(11, { limit: 5 }), shared: true });
      const [a, b] = await Promise.all([first, second]);
      assert.notEqual(a.rows[2]!.name, 'changed within the turn', 'read before the change');
      assert.equal(b.rows[1]!.id, uuid(12));
      assert.equal(b.rows[1]!.name, 'changed within the turn');
      assert.equal(b.rows[2]!.id, uuid(13));
      assert.equal(b.rows[2]!.name, 'changed by hand, same version');
      assert.notEqual(b.rows[0], a.rows[1], 'another process could have changed any row: none kept');
      assert.deepEqual(store.sharedPages, { kept: before.kept + 1, filled: before.filled + 1, whole: before.whole });
    });
  });
}
