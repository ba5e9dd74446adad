// SQLite's full-text index (src/store/sqlite/search-migration.ts, ddl.ts searchIndex): an update re-indexes a row only when a searchable field changed, and a file whose triggers an earlier build made gets this build's at start.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { openDatabase } from '../../../src/store/sqlite/native-handles.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../../src/store/types.js';
import { productRow, rowId } from '../../support/list-rows.js';

const model = compileModel(withPlatform(commerce));

describe('SQLite full-text index', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'canon-search-index-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const found = async (store: Store, words: string): Promise<string[]> =>
    (await store.list('products', { where: [], orderBy: [{ path: 'id', desc: false }], limit: 10, offset: 0, search: words })).rows.map((r) => r.id);
  const triggerOf = (file: string): string => {
    const db = openDatabase(file, { readonly: true });
    try {
      return db.prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'fts_products_au'").pluck().get() as string;
    } finally {
      db.close();
    }
  };

  it('a price update leaves the index alone (the rows the index holds do not move); a name update re-indexes the row', async () => {
    const file = path.join(dir, 'a.db');
    const store = new SqliteStore({ path: file, listCache: false });
    await store.migrate(model);
    try {
      await store.transaction((tx) => tx.insert('products', productRow(1, { name: 'copper kettle' })));
      // The index's own row count (FTS5's docsize shadow table holds a row per indexed row) and the row's segment data,
      // read before and after a price update: the same when nothing was re-indexed.
      const shadow = (): unknown => {
        const db = openDatabase(file, { readonly: true });
        try {
          return db.prepare('SELECT (SELECT group_concat(id) FROM fts_products_docsize) || (SELECT group_concat(hex(block)) FROM fts_products_data)').pluck().get();
        } finally {
          db.close();
        }
      };
      const before = shadow();
      await store.transaction((tx) => tx.update('products', productRow(1, { name: 'copper kettle', version: 2, price: { amount: 999, currency: 'EUR' } })));
      assert.equal(shadow(), before, 'a price update wrote nothing to the index');
      assert.deepEqual(await found(store, 'kettle'), [rowId(1)]);
      await store.transaction((tx) => tx.update('products', productRow(1, { name: 'brass teapot', version: 3 })));
      assert.notEqual(shadow(), before);
      assert.deepEqual(await found(store, 'kettle'), []);
      assert.deepEqual(await found(store, 'teapot'), [rowId(1)]);
    } finally {
      await store.close();
    }
  });

  it("an earlier build's update trigger (re-indexing on every update) is replaced at start, and the index still answers", async () => {
    const file = path.join(dir, 'b.db');
    const first = new SqliteStore({ path: file, listCache: false });
    await first.migrate(model);
    await first.transaction((tx) => tx.insert('products', productRow(2, { name: 'walnut desk' })));
    await first.close();
    const current = triggerOf(file);
    assert.match(current, / WHEN old\."name" IS NOT new\."name" OR old\."description" IS NOT new\."description" BEGIN /);
    // The trigger as the build before this one made it.
    const db = openDatabase(file);
    db.exec('DROP TRIGGER fts_products_au');
    db.exec(current.replace(/ WHEN .* BEGIN /, ' BEGIN '));
    db.close();
    assert.doesNotMatch(triggerOf(file), / WHEN /);
    const second = new SqliteStore({ path: file, listCache: false });
    await second.migrate(model);
    try {
      assert.equal(triggerOf(file), current);
      await second.transaction((tx) => tx.update('products', productRow(2, { name: 'oak desk', version: 2 })));
      assert.deepEqual(await found(second, 'walnut'), []);
      assert.deepEqual(await found(second, 'oak'), [rowId(2)]);
    } finally {
      await second.close();
    }
  });
});
