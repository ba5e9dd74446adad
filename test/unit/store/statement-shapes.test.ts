// Issue 26.4: clients shape list SQL, so what they vary must not multiply statements: one text for any IN list length and any filter order, on both dialects; SQLite's statement caches stay bounded whatever is sent, and what they evict is released.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { commerce } from '../../../examples/commerce/index.js';
import { DEFERRED_FROM_OFFSET, getManySql, listSql } from '../../../src/store/sql/queries.js';
import { sqliteDialect } from '../../../src/store/sqlite/dialect.js';
import { pgDialect } from '../../../src/store/postgres/dialect.js';
import { tableName } from '../../../src/model/compile.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { LIST_STATEMENTS_MAX, STATEMENTS_MAX } from '../../../src/store/sqlite/sqlite-ops.js';
import { RELEASE_BATCH, retainedCount, retiringCount } from '../../../src/store/sqlite/native-handles.js';
import { StatementCache } from '../../../src/store/sqlite/statement-cache.js';
import type { Condition, ListQuery } from '../../../src/store/types.js';

const model = compileModel(withPlatform(commerce));
const products = model.resources.get('products')!;
const uuid = (i: number): string => `01900000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `id[in]` of n ids and `price.amount[in]` of 101 - n amounts, in either order. */
function inShape(n: number): Condition[] {
  const ids: Condition = { path: 'id', op: 'in', value: Array.from({ length: n }, (_, i) => uuid(i)) };
  const amounts: Condition = { path: 'price.amount', op: 'in', value: Array.from({ length: 101 - n }, (_, i) => 100 + i) };
  return n % 2 ? [ids, amounts] : [amounts, ids];
}

const query = (where: Condition[], orderBy = [{ path: 'id', desc: false }]): ListQuery => ({ where, orderBy, limit: 20 });

describe('list SQL shapes', () => {
  for (const [name, dialect] of [
    ['SQLite', sqliteDialect],
    ['PostgreSQL', pgDialect],
  ] as const) {
    it(`${name}: an offset from DEFERRED_FROM_OFFSET on reads the page's keys first (one more text), not with a search or a claim`, () => {
      const where: Condition[] = [{ path: 'status', op: 'eq', value: 'active' }];
      const at = (offset: number, extra: Partial<ListQuery> = {}) => listSql(dialect, products, { ...query(where), offset, ...extra }, tableName)!.page;
      const key = dialect === sqliteDialect ? 'rid' : 'id';
      assert.doesNotMatch(at(DEFERRED_FROM_OFFSET - 1).text, / IN \(SELECT /);
      const deep = at(DEFERRED_FROM_OFFSET);
      assert.match(deep.text, new RegExp(`WHERE ${key} IN \\(SELECT ${key} FROM "products" WHERE .* ORDER BY .* LIMIT \\? OFFSET \\?\\) ORDER BY `));
      // The same values in the same order as the plain statement binds them: the inner statement is the plain one.
      assert.deepEqual(deep.params, ['active', 20, DEFERRED_FROM_OFFSET]);
      assert.equal(at(DEFERRED_FROM_OFFSET + 977).text, deep.text, 'one text for every deep offset');
      assert.doesNotMatch(at(5_000, { search: 'lamp' }).text, new RegExp(`${key} IN \\(SELECT`));
      if (dialect === pgDialect) assert.doesNotMatch(at(5_000, { skipLocked: true }).text, / IN \(SELECT /);
    });

    it(`${name}: one text for any IN list length and either filter order, values bound apart`, () => {
      const texts = new Set<string>();
      for (let n = 1; n <= 100; n++) {
        const sql = listSql(dialect, products, query(inShape(n)), tableName)!;
        texts.add(sql.page.text);
        texts.add(sql.count.text);
      }
      assert.equal(texts.size, 2, [...texts].join('\n'));
      // The values travel as parameters: both lists whole, the id list first (conditions by path).
      for (const n of [1, 2, 50, 100]) {
        const { params } = listSql(dialect, products, query(inShape(n)), tableName)!.page;
        const lists = params.slice(0, 2).map((p) => (typeof p === 'string' ? JSON.parse(p) : p));
        assert.deepEqual(
          lists[0],
          Array.from({ length: n }, (_, i) => uuid(i)),
        );
        assert.equal((lists[1] as unknown[]).length, 101 - n);
      }
      const many = new Set(
        [1, 7, 1000].map(
          (n) =>
            getManySql(
              dialect,
              products,
              Array.from({ length: n }, (_, i) => uuid(i)),
            )!.text,
        ),
      );
      assert.equal(many.size, 1);
    });
  }
});

describe('SQLite statement caches', () => {
  it('one statement for any IN list length and filter order: 100 shapes add none once one was seen', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    await store.migrate(model);
    try {
      await store.list('products', query(inShape(1)));
      await store.list('products', query(inShape(2)));
      const seen = store.cachedStatements;
      for (let n = 1; n <= 100; n++) await store.list('products', query(inShape(n)));
      assert.equal(store.cachedStatements, seen);
    } finally {
      await store.close();
    }
  });

  it('stays bounded whatever the shapes, releases what it evicts, and still answers right', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    await store.migrate(model);
    try {
      const now = new Date(Date.UTC(2026, 0, 1)).toISOString();
      await store.transaction(async (tx) => {
        for (let i = 0; i < 5; i++) {
          await tx.insert('products', {
            id: uuid(i),
            version: 1,
            created_at: now,
            updated_at: now,
            name: `p${i}`,
            description: null,
            price: { amount: 100 + i, currency: 'EUR' },
            status: 'active',
          });
        }
      });
      // Pairs of distinct filters (path and operator), each in two sorts: 1,190 statements that cannot be fewer.
      const filters: Condition[] = [];
      const values: Record<string, unknown> = { id: uuid(1), created_at: now, 'price.amount': 102, 'price.currency': 'EUR', status: 'active' };
      for (const path of Object.keys(values))
        for (const op of ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in'] as const) filters.push({ path, op, value: op === 'in' ? [values[path]] : values[path] } as Condition);
      const shapes: ListQuery[] = [];
      for (let i = 0; i < filters.length; i++)
        for (let j = i + 1; j < filters.length; j++)
          for (const desc of [false, true])
            shapes.push(
              query(
                [filters[i]!, filters[j]!],
                [
                  { path: 'name', desc },
                  { path: 'id', desc },
                ],
              ),
            );
      assert.ok(shapes.length > LIST_STATEMENTS_MAX + RELEASE_BATCH);
      const first = shapes[0]!;
      const expected = (await store.list('products', first)).rows.map((r) => r.id);
      await turn();
      const pinned = retainedCount();
      for (const [i, shape] of shapes.entries()) {
        await store.list('products', shape);
        if (i % 100 === 0) await turn();
      }
      await turn();
      await turn();
      assert.ok(store.cachedStatements <= STATEMENTS_MAX + LIST_STATEMENTS_MAX, `${store.cachedStatements} statements cached`);
      // Evicted statements were released (destroyed), not kept pinned: at most one batch waits.
      assert.ok(retiringCount() < RELEASE_BATCH, `${retiringCount()} retired statements waiting`);
      assert.ok(retainedCount() - pinned <= LIST_STATEMENTS_MAX + RELEASE_BATCH, `${retainedCount() - pinned} more statements pinned after ${shapes.length} shapes`);
      // The first shape was evicted long ago: prepared again, it answers the same.
      assert.deepEqual(
        (await store.list('products', first)).rows.map((r) => r.id),
        expected,
      );
    } finally {
      await store.close();
    }
  });
});

describe('StatementCache', () => {
  it('evicts the oldest entry not used since the hand passed it, and hands it over', () => {
    const evicted: string[] = [];
    const cache = new StatementCache<string>(3, (s) => evicted.push(s));
    cache.set('a', 'A');
    cache.set('b', 'B');
    cache.set('c', 'C');
    assert.equal(cache.get('a'), 'A');
    cache.set('d', 'D');
    // a was used: it gets a second chance, b goes.
    assert.deepEqual(evicted, ['B']);
    assert.equal(cache.get('b'), undefined);
    cache.set('e', 'E');
    assert.deepEqual(evicted, ['B', 'C']);
    assert.equal(cache.size, 3);
    assert.throws(() => new StatementCache<string>(0, () => undefined), /at least 1/);
  });
});
