// SQLite's kept records and list rows across this process's commits: a commit forgets the rows it wrote and keeps every other; another process's commit forgets them all; a read that raced a commit never keeps what the commit replaced.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { StoredRecord } from '../../../src/store/types.js';
import { idPage, productRow, rowId } from '../../support/list-rows.js';

const model = compileModel(withPlatform(commerce));
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/** Product `i` written again: the next version, another price. */
const changed = (r: StoredRecord, amount: number): StoredRecord => ({
  ...r,
  version: (r.version as number) + 1,
  updated_at: '2026-02-01T00:00:00.000Z',
  price: { amount, currency: 'EUR' },
});

describe('SQLite kept records across our own commits', () => {
  let dir: string;
  let file: string;
  let store: SqliteStore;
  let other: SqliteStore;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'canon-kept-records-'));
    file = path.join(dir, 'kept.db');
    store = new SqliteStore({ path: file, listRowsAfterMs: 0 });
    await store.migrate(model);
    other = new SqliteStore({ path: file, listRowsAfterMs: 0 });
    await other.migrate(model);
    await store.transaction((tx) =>
      tx.insertMany(
        'products',
        Array.from({ length: 20 }, (_, i) => productRow(i)),
      ),
    );
  });
  after(async () => {
    await other?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a commit forgets the record it updated and keeps the others, the same objects', async () => {
    const a = (await store.get('products', rowId(0)))!;
    const b = (await store.get('products', rowId(1)))!;
    assert.equal(await store.get('products', rowId(1)), b, 'kept before any write');
    await store.transaction((tx) => tx.update('products', changed(a, 777)));
    const a2 = (await store.get('products', rowId(0)))!;
    assert.deepEqual(a2.price, { amount: 777, currency: 'EUR' });
    assert.equal(a2.version, (a.version as number) + 1);
    assert.equal(await store.get('products', rowId(1)), b, 'a row the commit did not write is still the record kept');
  });

  it('a commit that deletes or inserts a row forgets it: a deleted row reads as gone, an inserted one as it is', async () => {
    const c = (await store.get('products', rowId(2)))!;
    assert.ok(c);
    assert.equal(await store.get('products', rowId(50)), null);
    await store.transaction(async (tx) => {
      await tx.delete('products', rowId(2));
      await tx.insert('products', productRow(50, { name: 'fifty' }));
    });
    assert.equal(await store.get('products', rowId(2)), null);
    assert.equal((await store.get('products', rowId(50)))?.name, 'fifty');
    await store.transaction((tx) => tx.insert('products', productRow(2)));
  });

  it('a record read and kept while a transaction was writing its row is forgotten at the commit', async () => {
    const before = (await store.get('products', rowId(3)))!;
    await store.transaction(async () => undefined);
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    const tx = store.transaction(async (t) => {
      await t.update('products', changed(before, 4_242));
      wrote();
      // The transaction stays open over several turns while plain reads go on.
      await sleep(20);
    });
    await written;
    // Served from the last commit (the read connection): the old record, read and kept during the transaction.
    const during = (await store.get('products', rowId(3)))!;
    assert.deepEqual(during.price, before.price);
    await tx;
    const afterCommit = (await store.get('products', rowId(3)))!;
    assert.deepEqual(afterCommit.price, { amount: 4_242, currency: 'EUR' });
  });

  it('a transaction rolled back changes nothing kept', async () => {
    const d = (await store.get('products', rowId(4)))!;
    await assert.rejects(
      store.transaction(async (tx) => {
        await tx.update('products', changed(d, 1));
        throw new Error('undone');
      }),
      /undone/,
    );
    assert.deepEqual((await store.get('products', rowId(4)))!.price, d.price);
  });

  it('another process’s commit forgets every kept record from the next turn on', async () => {
    const e = (await store.get('products', rowId(5)))!;
    const f = (await store.get('products', rowId(6)))!;
    await other.transaction((tx) => tx.update('products', changed(e, 5_555)));
    await turn();
    assert.deepEqual((await store.get('products', rowId(5)))!.price, { amount: 5_555, currency: 'EUR' });
    const f2 = (await store.get('products', rowId(6)))!;
    assert.notEqual(f2, f, 'read again: another process could have changed any row');
    assert.deepEqual(f2, f);
  });

  it('shared list rows: our commit replaces the row it wrote in the next page and keeps the others', async () => {
    const page = { ...idPage(7), shared: true };
    const first = (await store.list('products', page)).rows;
    const again = (await store.list('products', page)).rows;
    assert.equal(again[1], first[1], 'kept across pages');
    await store.transaction((tx) => tx.update('products', changed(first[0]!, 8_080)));
    const next = (await store.list('products', page)).rows;
    assert.deepEqual(next[0]!.price, { amount: 8_080, currency: 'EUR' });
    assert.equal(next[0]!.version, (first[0]!.version as number) + 1);
    for (let i = 1; i < 5; i++) assert.equal(next[i], first[i], `row ${i} is the record kept before the commit`);
  });

  it('past WRITTEN_MAX rows in one commit, every kept record and row is forgotten', async () => {
    const g = (await store.get('products', rowId(8)))!;
    const page = { ...idPage(8), shared: true };
    const rows = (await store.list('products', page)).rows;
    assert.equal(await store.get('products', rowId(8)), g);
    await store.transaction((tx) =>
      tx.insertMany(
        'products',
        Array.from({ length: 10_001 }, (_, i) => productRow(100_000 + i)),
      ),
    );
    const g2 = (await store.get('products', rowId(8)))!;
    assert.notEqual(g2, g);
    assert.deepEqual(g2, g);
    const rows2 = (await store.list('products', page)).rows;
    assert.notEqual(rows2[0], rows[0]);
    assert.deepEqual(rows2, rows);
  });
});
