// PostgreSQL pages read by ids and versions (keptPage): kept rows answer, the others are read by id, and any sign of a second snapshot makes the page be read whole.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { KeptShare, keptPage } from '../../../src/store/postgres/kept-page.js';
import { pgCodec } from '../../../src/store/postgres/rows.js';
import { RecordCache } from '../../../src/store/record-cache.js';
import { toRow, type Row } from '../../../src/store/sql/rows.js';
import type { StoredRecord } from '../../../src/store/types.js';
import { productRow } from '../../support/list-rows.js';

const products = compileModel(withPlatform(commerce)).resources.get('products')!;

/** A row as the driver gives it for every column (the second statement's; jsonb arrives parsed), and for the page's three. */
function fullRow(record: StoredRecord): Row {
  const row = toRow(products, record, pgCodec);
  for (const [column, value] of Object.entries(row)) {
    const field = record[column];
    if (typeof value === 'string' && typeof field === 'object' && field !== null) row[column] = JSON.parse(value);
  }
  return row;
}
const narrowRow = (record: StoredRecord): Row => {
  const row = fullRow(record);
  return { id: row.id, version: row.version, updated_at: row.updated_at };
};

/** A second statement that answers from `table` (rows by id, as `WHERE id = ANY(…)` would) and records what it was asked. */
function reader(table: Map<string, StoredRecord>): { read: (sql: string, params: unknown[]) => Promise<Row[]>; asked: string[][] } {
  const asked: string[][] = [];
  return {
    asked,
    read: async (_sql, params) => {
      const ids = params[0] as string[];
      asked.push(ids);
      return ids.flatMap((id) => (table.has(id) ? [fullRow(table.get(id)!)] : []));
    },
  };
}

describe('keptPage (PostgreSQL)', () => {
  const records = Array.from({ length: 5 }, (_, i) => productRow(i));
  const table = new Map(records.map((r) => [r.id, r]));

  it('answers every row from the kept records without a second statement; the records are the kept objects', async () => {
    const cache = new RecordCache();
    const kept = records.map((r) => cache.set('products', r.id, structuredClone(r)));
    const { read, asked } = reader(table);
    const rows = await keptPage(products, records.map(narrowRow), () => cache, read, new KeptShare());
    assert.deepEqual(asked, []);
    assert.equal(rows!.length, 5);
    rows!.forEach((row, i) => assert.equal(row, kept[i]));
  });

  it('reads the rows not kept by id in one statement, in the page’s order, and keeps them', async () => {
    const cache = new RecordCache();
    cache.set('products', records[1]!.id, structuredClone(records[1]!));
    cache.set('products', records[3]!.id, structuredClone(records[3]!));
    const { read, asked } = reader(table);
    const rows = await keptPage(products, records.map(narrowRow), () => cache, read, new KeptShare());
    assert.deepEqual(asked, [[records[0]!.id, records[2]!.id, records[4]!.id]]);
    assert.deepEqual(rows, records);
    assert.ok(Object.isFrozen(cache.get('products', records[0]!.id)), 'the rows read are kept, frozen');
    assert.equal(cache.get('products', records[4]!.id), rows![4]);
  });

  it('a kept record of another version is no answer: the row is read, and the new version kept', async () => {
    const cache = new RecordCache();
    cache.set('products', records[0]!.id, structuredClone(records[0]!));
    const newer = { ...records[0]!, version: 2, name: 'newer' };
    const { read } = reader(new Map([[newer.id, newer]]));
    const rows = await keptPage(products, [narrowRow(newer)], () => cache, read, new KeptShare());
    assert.deepEqual(rows, [newer]);
    assert.equal(cache.get('products', newer.id)!.name, 'newer');
  });

  it('is undefined, so the page is read whole, when a row changed or was deleted between the two statements', async () => {
    const changed = { ...records[2]!, version: 2, name: 'changed since' };
    const later = new Map(table);
    later.set(changed.id, changed);
    assert.equal(await keptPage(products, records.map(narrowRow), () => new RecordCache(), reader(later).read, new KeptShare()), undefined, 'changed');
    const deleted = new Map(table);
    deleted.delete(records[4]!.id);
    assert.equal(await keptPage(products, records.map(narrowRow), () => new RecordCache(), reader(deleted).read, new KeptShare()), undefined, 'deleted');
  });

  it('is undefined when the kept rows answer nothing, before the second statement or after it (the snapshot moved)', async () => {
    const { read, asked } = reader(table);
    assert.equal(await keptPage(products, records.map(narrowRow), () => undefined, read, new KeptShare()), undefined);
    assert.deepEqual(asked, [], 'nothing read by id when nothing can be kept');
    const cache = new RecordCache();
    let calls = 0;
    const movedAfterFirst = (): RecordCache | undefined => (calls++ === 0 ? cache : undefined);
    assert.equal(await keptPage(products, records.map(narrowRow), movedAfterFirst, read, new KeptShare()), undefined);
    assert.equal(calls, 2);
    assert.equal(cache.get('products', records[0]!.id), undefined, 'nothing kept from a read the snapshot no longer vouches for');
  });

  it('tells the share of rows found kept: a page finding few turns ids-first pages off until pages find their rows kept again', async () => {
    const share = new KeptShare();
    assert.equal(share.worth, true, 'pages start hopeful');
    const { read } = reader(table);
    // Five rows, none kept: each such page counts as 0 of 5 found.
    for (let i = 0; i < 7; i++) {
      await keptPage(products, records.map(narrowRow), () => new RecordCache(), read, share);
    }
    assert.equal(share.worth, false, 'seven pages in a row finding nothing kept');
    for (let i = 0; i < 7; i++) share.note(5, 5);
    assert.equal(share.worth, true, 'pages whose rows were all kept (read whole, the kept rows answering) bring it back');
    share.note(0, 0);
    assert.equal(share.worth, true, 'an empty page tells nothing');
  });
});
