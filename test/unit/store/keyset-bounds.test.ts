// A keyset page whose walk runs the same way as a range filter on its first key (walking up by price with price[gte]) is bounded by its position, not by the filter: SQLite's plan seeks to the position, so a page costs the same at any depth (DESIGN §6); every walk still lists exactly the filtered rows.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel, tableName } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { listSql } from '../../../src/store/sql/queries.js';
import { pgDialect } from '../../../src/store/postgres/dialect.js';
import { sqliteDialect } from '../../../src/store/sqlite/dialect.js';
import { openDatabase } from '../../../src/store/sqlite/native-handles.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { Condition, ListQuery, SortKey, StoredRecord } from '../../../src/store/types.js';
import { productRow } from '../../support/list-rows.js';

const model = compileModel(withPlatform(commerce));
const products = model.resources.get('products')!;
const COUNT = 300;
// Prices repeat (every tenth product shares one), so ties are broken by id across page boundaries.
const product = (i: number): StoredRecord => productRow(i, { price: { amount: 1_000 + ((i * 37) % 97) * 10, currency: 'EUR' }, status: i % 3 === 0 ? 'draft' : 'active' });

interface Walk {
  name: string;
  where: Condition[];
  orderBy: SortKey[];
  /** Whether the position takes the filter's place as the index bound. */
  residual: boolean;
}

const price = (desc: boolean): SortKey[] => [
  { path: 'price.amount', desc },
  { path: 'id', desc },
];
const WALKS: Walk[] = [
  {
    name: 'up by price, price[gte]',
    where: [
      { path: 'status', op: 'eq', value: 'active' },
      { path: 'price.amount', op: 'gte', value: 1_200 },
    ],
    orderBy: price(false),
    residual: true,
  },
  { name: 'up by price, price[gt], no other filter', where: [{ path: 'price.amount', op: 'gt', value: 1_300 }], orderBy: price(false), residual: true },
  {
    name: 'down by price, price[lte]',
    where: [
      { path: 'status', op: 'eq', value: 'active' },
      { path: 'price.amount', op: 'lte', value: 1_800 },
    ],
    orderBy: price(true),
    residual: true,
  },
  {
    name: 'down by price, price[lt] and price[gte]',
    where: [
      { path: 'price.amount', op: 'lt', value: 1_900 },
      { path: 'price.amount', op: 'gte', value: 1_100 },
    ],
    orderBy: price(true),
    residual: true,
  },
  {
    name: 'down by price, price[gte] (the other side)',
    where: [
      { path: 'status', op: 'eq', value: 'draft' },
      { path: 'price.amount', op: 'gte', value: 1_200 },
    ],
    orderBy: price(true),
    residual: false,
  },
  {
    name: 'up by name, price[gte] (another key)',
    where: [{ path: 'price.amount', op: 'gte', value: 1_200 }],
    orderBy: [
      { path: 'name', desc: false },
      { path: 'id', desc: false },
    ],
    residual: false,
  },
];

const valueOf = (r: StoredRecord, p: string): unknown => (p === 'price.amount' ? (r.price as { amount: number }).amount : r[p]);
function matches(r: StoredRecord, c: Condition): boolean {
  const v = valueOf(r, c.path) as number | string;
  const w = c.value as number | string;
  return c.op === 'eq' ? v === w : c.op === 'gt' ? v > w : c.op === 'gte' ? v >= w : c.op === 'lt' ? v < w : v <= w;
}
function compare(a: StoredRecord, b: StoredRecord, orderBy: SortKey[]): number {
  for (const k of orderBy) {
    const x = valueOf(a, k.path) as number | string;
    const y = valueOf(b, k.path) as number | string;
    if (x !== y) return (x < y ? -1 : 1) * (k.desc ? -1 : 1);
  }
  return 0;
}

describe('keyset pages bounded by their position', () => {
  let dir: string;
  let file: string;
  let store: SqliteStore;
  const all = Array.from({ length: COUNT }, (_, i) => product(i));
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'canon-keyset-bounds-'));
    file = path.join(dir, 'walks.db');
    store = new SqliteStore({ path: file });
    await store.migrate(model);
    await store.transaction((tx) => tx.insertMany('products', all));
  });
  after(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const walk of WALKS) {
    it(`${walk.name}: every page lists the next filtered rows, the whole walk exactly the filtered set`, async () => {
      const expected = all.filter((r) => walk.where.every((c) => matches(r, c))).sort((a, b) => compare(a, b, walk.orderBy));
      assert.ok(expected.length > 40, 'the walk spans several pages');
      const seen: string[] = [];
      let position: unknown[] | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const q: ListQuery = { where: walk.where, orderBy: walk.orderBy, limit: 17, ...(position ? { after: position } : {}) };
        const { rows } = await store.list('products', q);
        seen.push(...rows.map((r) => r.id as string));
        if (rows.length < 17) break;
        const last = rows[rows.length - 1]!;
        position = walk.orderBy.map((k) => valueOf(last, k.path));
      }
      assert.deepEqual(
        seen,
        expected.map((r) => r.id),
      );
    });

    it(`${walk.name}: SQLite ${walk.residual ? 'seeks to the position (the filter checked on each row)' : 'keeps the filter as written'}; PostgreSQL's text is as written`, () => {
      const q: ListQuery = {
        where: walk.where,
        orderBy: walk.orderBy,
        limit: 17,
        after: walk.orderBy.map((k) => (k.path === 'id' ? productRow(150).id : k.path === 'name' ? 'p150' : 1_500)),
      };
      const sql = listSql(sqliteDialect, products, q, tableName)!;
      const lead = walk.orderBy[0]!;
      for (const c of walk.where.filter((w) => w.path === 'price.amount')) {
        // Only a bound on the walk's own side: walking down, price[gte] stays the index's lower bound.
        const sameSide = lead.path === c.path && (lead.desc ? c.op === 'lt' || c.op === 'lte' : c.op === 'gt' || c.op === 'gte');
        assert.equal(sql.page.text.includes(`+"price_amount" ${{ gt: '>', gte: '>=', lt: '<', lte: '<=' }[c.op as 'gt']} ?`), walk.residual && sameSide, sql.page.text);
      }
      assert.doesNotMatch(sql.count.text, /\+"/, 'the count keeps every bound');
      assert.doesNotMatch(listSql(pgDialect, products, q, tableName)!.page.text, /\+"/);
      // The plan: the row-value position is the index range's bound, where the filter's bound took its place before.
      const db = openDatabase(file, { readonly: true });
      try {
        const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql.page.text}`).all(...sql.page.params) as { detail: string }[]).map((r) => r.detail).join('\n');
        if (walk.residual) assert.match(plan, /USING (COVERING )?INDEX \S+ \((status=\? AND )?(price_amount>\? AND )?\(price_amount,id\)[<>]\(\?,\?\)/, plan);
      } finally {
        db.close();
      }
      // Without a position (the walk's first page) the filter stays the index's bound.
      assert.doesNotMatch(listSql(sqliteDialect, products, { ...q, after: undefined }, tableName)!.page.text, /\+"/);
    });
  }
});
