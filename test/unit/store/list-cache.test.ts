// The SQLite list cache: emptied when the change stamp moves, bounded by rows and pages, large pages never kept, kept results frozen.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ListCache } from '../../../src/store/list-cache.js';
import type { ListQuery, ListResult } from '../../../src/store/types.js';

const query = (limit: number, offset = 0): ListQuery => ({ where: [{ path: 'status', op: 'eq', value: 'active' }], orderBy: [{ path: 'id', desc: false }], limit, offset });
const page = (n: number): ListResult => ({ rows: Array.from({ length: n }, (_, i) => ({ id: `r${i}`, version: 1, created_at: 't', updated_at: 't', tags: ['a'] })) });

it('keeps a page until the stamp moves, frozen to the last row', () => {
  const cache = new ListCache();
  cache.validate(1);
  const key = cache.keyOf('products', query(20))!;
  const kept = cache.set(key, page(20));
  assert.equal(cache.get(key), kept);
  assert.ok(Object.isFrozen(kept.rows) && Object.isFrozen(kept.rows[0]) && Object.isFrozen(kept.rows[0]!.tags));
  assert.throws(() => {
    (kept.rows[0] as Record<string, unknown>).name = 'changed';
  }, TypeError);
  cache.validate(1);
  assert.equal(cache.get(key), kept);
  cache.validate(2);
  assert.equal(cache.get(key), undefined);
  assert.deepEqual(cache.size, { pages: 0, rows: 0 });
});

it('tells queries apart by every part (resource, filter values, order, limit, offset, position, search, total)', () => {
  const cache = new ListCache();
  const keys = new Set([
    cache.keyOf('products', query(20)),
    cache.keyOf('orders', query(20)),
    cache.keyOf('products', { ...query(20), where: [{ path: 'status', op: 'eq', value: 'draft' }] }),
    cache.keyOf('products', { ...query(20), orderBy: [{ path: 'id', desc: true }] }),
    cache.keyOf('products', query(21)),
    cache.keyOf('products', query(20, 20)),
    cache.keyOf('products', { ...query(20), after: ['x'] }),
    cache.keyOf('products', { ...query(20), search: 'lamp' }),
    cache.keyOf('products', { ...query(20), withTotal: true }),
  ]);
  assert.equal(keys.size, 9);
});

it('never keeps a page of more than 101 rows, and holds at most 10,000 rows in all, the oldest pages going first', () => {
  const cache = new ListCache();
  cache.validate(1);
  assert.equal(cache.keyOf('products', query(102)), undefined);
  for (let i = 0; i < 150; i++) cache.set(cache.keyOf('products', query(100, i * 100))!, page(100));
  assert.deepEqual(cache.size, { pages: 100, rows: 10_000 });
  assert.equal(cache.get(cache.keyOf('products', query(100, 0))!), undefined);
  assert.ok(cache.get(cache.keyOf('products', query(100, 149 * 100))!));
});

it('holds at most 1,000 pages however small', () => {
  const cache = new ListCache();
  cache.validate(1);
  for (let i = 0; i < 1_200; i++) cache.set(cache.keyOf('products', query(1, i))!, page(1));
  assert.deepEqual(cache.size, { pages: 1_000, rows: 1_000 });
});

it('an offset list counts once per filter and stamp: later pages of the filter take the kept total, another filter or a new stamp counts again', async () => {
  const cache = new ListCache();
  const asked: boolean[] = [];
  const read = async (q: ListQuery): Promise<ListResult> => {
    asked.push(Boolean(q.withTotal));
    return { ...page(2), ...(q.withTotal ? { total: 40 + asked.length } : {}) };
  };
  const offsetQuery = (offset: number, status = 'active'): ListQuery => ({ ...query(2, offset), where: [{ path: 'status', op: 'eq', value: status }], withTotal: true });
  assert.equal((await cache.counted('products', offsetQuery(0), 1, read)).total, 41);
  assert.equal((await cache.counted('products', offsetQuery(2), 1, read)).total, 41);
  assert.equal((await cache.counted('products', offsetQuery(4), 1, read)).total, 41);
  assert.equal((await cache.counted('products', offsetQuery(0, 'draft'), 1, read)).total, 44);
  assert.equal((await cache.counted('products', offsetQuery(2), 2, read)).total, 45);
  assert.deepEqual(asked, [true, false, false, true, true]);
});

it("keeps counts for many more filters than pages (a range filter takes a value per client), bounded by number and by their keys' characters", async () => {
  let counted = 0;
  const read = async (q: ListQuery): Promise<ListResult> => {
    if (q.withTotal) counted++;
    return { ...page(1), ...(q.withTotal ? { total: 5 } : {}) };
  };
  const ranged = (gte: number | string): ListQuery => ({ ...query(1), where: [{ path: 'price.amount', op: 'gte', value: gte }], withTotal: true });
  // Ten pages' room, fifty counts': all fifty filters counted once each are then answered from their counts.
  const cache = new ListCache(10, 100, 101, 50, 100_000);
  for (let gte = 0; gte < 50; gte++) await cache.counted('products', ranged(gte), 1, read);
  assert.equal(counted, 50);
  for (let gte = 0; gte < 50; gte++) assert.equal((await cache.counted('products', ranged(gte), 1, read)).total, 5);
  assert.equal(counted, 50, 'no filter counted twice');
  // A fifty-first pushes out the oldest alone.
  await cache.counted('products', ranged(50), 1, read);
  await cache.counted('products', ranged(1), 1, read);
  assert.equal(counted, 51);
  await cache.counted('products', ranged(0), 1, read);
  assert.equal(counted, 52, 'the oldest count was forgotten');
  // By characters: long filter values push out as many counts as their keys need, and one longer than the bound is not kept.
  const short = new ListCache(10, 100, 101, 1_000, 3_000);
  counted = 0;
  for (let i = 0; i < 3; i++) await short.counted('products', ranged('x'.repeat(900) + i), 1, read);
  await short.counted('products', ranged('x'.repeat(900) + 3), 1, read);
  assert.equal(counted, 4);
  await short.counted('products', ranged('x'.repeat(900) + 0), 1, read);
  assert.equal(counted, 5, 'the fourth long key pushed out the first');
  await short.counted('products', ranged('x'.repeat(900) + 3), 1, read);
  assert.equal(counted, 5, 'the newest stayed');
  await short.counted('products', ranged('y'.repeat(4_000)), 1, read);
  await short.counted('products', ranged('y'.repeat(4_000)), 1, read);
  assert.equal(counted, 7, 'a key longer than the bound is counted each time, never kept');
  await short.counted('products', ranged('x'.repeat(900) + 3), 1, read);
  assert.equal(counted, 7, 'and pushed nothing out');
});

it('a count read while the stamp moved is not kept under the new stamp', async () => {
  const cache = new ListCache();
  const q: ListQuery = { ...query(2), withTotal: true };
  let reads = 0;
  await cache.counted('products', q, 'snapshot-1', async () => {
    reads++;
    // Another caller saw a newer snapshot meanwhile.
    cache.validate('snapshot-2');
    return { ...page(2), total: 7 };
  });
  const again = await cache.counted('products', q, 'snapshot-2', async (asked) => {
    reads++;
    return { ...page(2), ...(asked.withTotal ? { total: 8 } : {}) };
  });
  assert.equal(again.total, 8);
  assert.equal(reads, 2);
});

it('keeps a shared page the second time it is read under one stamp, not the first (a page read once is not worth freezing)', async () => {
  const cache = new ListCache();
  let reads = 0;
  const read = async (): Promise<ListResult> => {
    reads++;
    return page(20);
  };
  const first = await cache.through('products', query(20), 1, read);
  assert.equal(Object.isFrozen(first.rows[0]), false);
  assert.deepEqual(cache.size, { pages: 0, rows: 0 });
  const second = await cache.through('products', query(20), 1, read);
  assert.ok(Object.isFrozen(second.rows[0]));
  assert.equal(await cache.through('products', query(20), 1, read), second);
  assert.equal(reads, 2);
  // A new stamp forgets the pages and that they were read.
  await cache.through('products', query(20), 2, read);
  assert.deepEqual(cache.size, { pages: 0, rows: 0 });
  await cache.through('products', query(20), 2, read);
  assert.equal(reads, 4);
  assert.deepEqual(cache.size, { pages: 1, rows: 20 });
});

it('a walk cycling over more pages than the cache can hold keeps none of them; a shorter one is kept on its second round', async () => {
  const walk = async (cache: ListCache, pages: number, rounds: number, rows = 20): Promise<number> => {
    let reads = 0;
    const read = async (): Promise<ListResult> => {
      reads++;
      return page(rows);
    };
    for (let round = 0; round < rounds; round++) for (let i = 0; i < pages; i++) await cache.through('products', query(rows, i * rows), 1, read);
    return reads;
  };
  // 100 rows fit: six 20-row pages do not, so the pages read once are forgotten before they come round again.
  const long = new ListCache(1_000, 100);
  assert.equal(await walk(long, 6, 3), 18);
  assert.deepEqual(long.size, { pages: 0, rows: 0 });
  // Five pages fit: kept on the second round, served from the cache on the third.
  const short = new ListCache(1_000, 100);
  assert.equal(await walk(short, 5, 3), 10);
  assert.deepEqual(short.size, { pages: 5, rows: 100 });
  // The page bound counts too: three pages fit, four one-row pages do not.
  const few = new ListCache(3, 10_000);
  assert.equal(await walk(few, 4, 3, 1), 12);
  assert.deepEqual(few.size, { pages: 0, rows: 0 });
  assert.equal(await walk(new ListCache(3, 10_000), 3, 3, 1), 6);
});
