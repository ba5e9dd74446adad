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

const model = compileModel(withPlatform(commerce));
const uuid = (i: number): string => `01900000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;
const product = (i: number): StoredRecord => ({
  id: uuid(i),
  version: 1,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  name: `p${i}`,
  description: null,
  price: { amount: 100 + i, currency: 'EUR' },
  status: 'active',
  tags: ['t'],
});
const page = (offset: number, extra: Partial<ListQuery> = {}): ListQuery => ({ where: [], orderBy: [{ path: 'id', desc: false }], limit: 5, offset, ...extra });

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
