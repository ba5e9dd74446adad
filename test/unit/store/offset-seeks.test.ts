// Offset seeks: which queries take them, the nearest known position below an offset, the keyset values learnt from a page's last row, the bound.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ListCache } from '../../../src/store/list-cache.js';
import { OffsetSeeks } from '../../../src/store/offset-seeks.js';
import type { ListQuery, StoredRecord } from '../../../src/store/types.js';

const orderBy = [
  { path: 'price.amount', desc: true },
  { path: 'label', desc: false },
  { path: 'id', desc: false },
];
const query = (offset: number | undefined, limit = 20): ListQuery => ({
  where: [{ path: 'status', op: 'eq', value: 'active' }],
  orderBy,
  limit,
  ...(offset !== undefined ? { offset } : {}),
});
const row = (i: number): StoredRecord => ({
  id: `id-${String(i).padStart(4, '0')}`,
  version: 1,
  created_at: 't',
  updated_at: 't',
  price: i % 2 ? { amount: 1000 - i, currency: 'EUR' } : null,
  label: i % 3 ? `l${i}` : null,
});
const page = (offset: number, n: number) => ({ rows: Array.from({ length: n }, (_, i) => row(offset + i)) });

it('takes offset and page lists only: not keyset pages, not searches ranked by relevance', () => {
  assert.equal(OffsetSeeks.walks(query(0)), true);
  assert.equal(OffsetSeeks.walks(query(undefined)), false);
  assert.equal(OffsetSeeks.walks({ ...query(40), after: ['x'] }), false);
  assert.equal(OffsetSeeks.walks({ ...query(40), search: 'lamp' }), false);
});

it('names a walk by resource, conditions and order (the list cache makes its key), never by offset or size', () => {
  const cache = new ListCache();
  assert.notEqual(cache.walkKey('products', query(0)), cache.walkKey('orders', query(0)));
  assert.notEqual(cache.walkKey('products', query(0)), cache.walkKey('products', { ...query(0), orderBy: [{ path: 'id', desc: true }] }));
  assert.notEqual(cache.walkKey('products', query(0)), cache.walkKey('products', { ...query(0), where: [] }));
  assert.equal(cache.walkKey('products', query(0)), cache.walkKey('products', query(60, 5)));
});

it('reads an offset from the nearest known position below it, with the keyset values of the row there', () => {
  const seeks = new OffsetSeeks();
  const walk = 'products walk';
  assert.deepEqual(seeks.from(walk, query(40)), query(40), 'nothing known yet');
  seeks.learn(walk, query(0), page(0, 20));
  seeks.learn(walk, query(60), page(60, 21));
  assert.equal(seeks.size, 2);
  // Position 19 holds row 19: money amount, a label, its id (null where the row has none).
  const after19 = [1000 - 19, 'l19', 'id-0019'];
  assert.deepEqual(seeks.from(walk, query(20)), { ...query(undefined), after: after19 });
  assert.deepEqual(seeks.from(walk, query(25, 5)), { ...query(undefined, 5), after: after19, offset: 5 });
  // Position 80 (the last of 21 rows from 60) has no price: null is a keyset value like any other.
  assert.deepEqual(seeks.from(walk, query(81)), { ...query(undefined), after: [null, 'l80', 'id-0080'] });
  assert.deepEqual(seeks.from(walk, query(80)), { ...query(undefined), after: after19, offset: 60 });
  // Below the first known position, and offset 0, read as asked.
  assert.deepEqual(seeks.from(walk, query(10)), query(10));
  assert.deepEqual(seeks.from(walk, query(19)), query(19));
  assert.deepEqual(seeks.from(walk, query(0)), query(0));
  // An empty page teaches nothing; a page learnt twice is held once.
  seeks.learn(walk, query(500), { rows: [] });
  seeks.learn(walk, query(0), page(0, 20));
  assert.equal(seeks.size, 2);
});

it('forgets everything when the bound is reached, and learns again from the next pages', () => {
  const seeks = new OffsetSeeks(3);
  const walk = 'products walk';
  for (let p = 0; p < 3; p++) seeks.learn(walk, query(p * 20), page(p * 20, 20));
  assert.equal(seeks.size, 3);
  seeks.learn(walk, query(100), page(100, 20));
  assert.equal(seeks.size, 1);
  assert.deepEqual(seeks.from(walk, query(40)), query(40));
  assert.deepEqual(seeks.from(walk, query(120)).after, [1000 - 119, 'l119', 'id-0119']);
  seeks.clear();
  assert.equal(seeks.size, 0);
  assert.deepEqual(seeks.from(walk, query(120)), query(120));
});

it('holds at most 1,000 walks (their keys hold filter values a client chooses): the next one forgets them all', () => {
  const seeks = new OffsetSeeks(20_000, 1_000);
  const walkOf = (i: number) => `products walk ${i}`;
  for (let i = 0; i < 1_000; i++) seeks.learn(walkOf(i), query(0), page(0, 20));
  assert.equal(seeks.size, 1_000);
  assert.deepEqual(seeks.from(walkOf(0), query(20)).after, [1000 - 19, 'l19', 'id-0019']);
  seeks.learn(walkOf(1_000), query(0), page(0, 20));
  assert.equal(seeks.size, 1);
  assert.deepEqual(seeks.from(walkOf(0), query(20)), query(20), 'the first walk was forgotten');
});
