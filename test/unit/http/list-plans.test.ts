// List plans kept per collection and query string: the same frozen plan for the same query, another for another secret or version, refusals never kept.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { AppError } from '../../../src/errors/app-error.js';
import { planFor } from '../../../src/http/routes/list-plans.js';
import { compileModel } from '../../../src/model/compile.js';
import { encodeNext, parseListParams, type ListPlan } from '../../../src/query/list-params.js';

const model = compileModel(commerce);
const products = model.resources.get('products')!;
const v2 = model.versions.find((v) => v.name === 'v2')!;
const v1 = model.versions.find((v) => v.name === 'v1')!;
const SECRET = 'a-secret-of-enough-length-0123456789';

it('gives the same frozen plan for the same collection and query string, and another for another secret', () => {
  const query = { status: 'active', sort: '-price.amount', limit: '20' };
  const a = planFor(v2, products, 'v2/products', '?status=active&sort=-price.amount&limit=20', query, SECRET);
  const b = planFor(v2, products, 'v2/products', '?status=active&sort=-price.amount&limit=20', query, SECRET);
  assert.equal(a, b);
  assert.ok(Object.isFrozen(a) && Object.isFrozen(a.where) && Object.isFrozen(a.where[0]));
  assert.deepEqual(a.where, [{ path: 'status', op: 'eq', value: 'active' }]);
  const other = planFor(v2, products, 'v2/products', '?status=active&sort=-price.amount&limit=20', query, `${SECRET}-other`);
  assert.notEqual(other, a);
  assert.notEqual(other.shape, undefined);
});

it("parses an older version's names into the newest, under that version's scope", () => {
  const plan = planFor(v1, products, 'v1/products', '?price_cents[gte]=300', { 'price_cents[gte]': '300' }, SECRET);
  assert.deepEqual(plan.where, [{ path: 'price.amount', op: 'gte', value: 300 }]);
});

it('refuses a bad query every time, in the names the client sent, and keeps nothing for it', () => {
  for (let i = 0; i < 2; i++) {
    assert.throws(
      () => planFor(v1, products, 'v1/products', '?price_cents[gte]=abc', { 'price_cents[gte]': 'abc' }, SECRET),
      (err: unknown) => err instanceof AppError && err.code === 'INVALID_QUERY' && err.details?.[0]?.field === 'price_cents[gte]',
    );
  }
});

/** A query string and its parsed form (as Fastify's parser gives it: a repeated name is an array). */
function parsed(raw: string): { raw: string; query: Record<string, string | string[]> } {
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(raw.slice(1))) {
    const had = query[k];
    query[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
  }
  return { raw, query };
}

/** What planFor answers (a plan or a refusal), for comparison with parseListParams on the whole query. */
function outcome(fn: () => ListPlan): unknown {
  try {
    return { plan: JSON.parse(JSON.stringify(fn())) as unknown };
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return { refused: err.code, message: err.message, details: err.details };
  }
}

/** planFor answers each of `cases` (v2 products) as parseListParams on the whole query does; twice, the second time from the plan of the rest it kept. */
function answersAsWhole(cases: string[]): void {
  for (const raw of cases) {
    const q = parsed(raw);
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(
        outcome(() => planFor(v2, products, 'v2/products', q.raw, q.query, SECRET)),
        outcome(() => parseListParams(products, q.query, SECRET, 'v2/products')),
        raw,
      );
    }
  }
}

it('a cursor page plans as the whole query parses, its cursor checked against the plan of the rest (every walk page a new URL)', () => {
  const first = planFor(v2, products, 'v2/products', '?status=active&sort=-price.amount&limit=5', { status: 'active', sort: '-price.amount', limit: '5' }, SECRET);
  const cursor = encodeNext(first, { price: { amount: 700 }, id: '01900000-0000-7000-8000-000000000007' }, undefined, SECRET);
  const foreign = encodeNext(planFor(v2, products, 'v2/products', '?status=draft', { status: 'draft' }, SECRET), { id: '01900000-0000-7000-8000-000000000007' }, undefined, SECRET);
  const cases = [
    `?status=active&sort=-price.amount&limit=5&cursor=${cursor}`,
    `?cursor=${cursor}&status=active&sort=-price.amount&limit=5`,
    `?status=active&cursor=${cursor}&sort=-price.amount&limit=5`,
    `?status=active&sort=-price.amount&limit=5&cursor=${cursor}x`,
    `?status=active&sort=-price.amount&limit=5&cursor=`,
    `?status=active&sort=-price.amount&limit=5&cursor=${foreign}`,
    `?status=active&sort=price.amount&limit=5&cursor=${cursor}`,
    `?status=bogus&sort=-price.amount&limit=5&cursor=${cursor}x`,
    `?status=active&sort=-price.amount&limit=500&cursor=${cursor}`,
    `?status=active&sort=-price.amount&offset=5&cursor=${cursor}`,
    `?status=active&sort=-price.amount&cursor=${cursor}&cursor=${cursor}`,
    `?status=active&sort=-price.amount&fields=id,name&cursor=${cursor}`,
    `?status=active&sort=-price.amount&fields=nope&cursor=${cursor}`,
  ];
  answersAsWhole(cases);
  const plan = planFor(v2, products, 'v2/products', cases[0]!, parsed(cases[0]!).query, SECRET);
  assert.deepEqual(plan.page, { style: 'cursor', limit: 5, after: [700, '01900000-0000-7000-8000-000000000007'] });
  assert.ok(Object.isFrozen(plan) && Object.isFrozen(plan.page) && Object.isFrozen(plan.where));
  // Bound to its collection: the same cursor under another scope is refused.
  assert.throws(
    () => planFor(v2, products, 'v2/other', cases[0]!, parsed(cases[0]!).query, SECRET),
    (err: unknown) => err instanceof AppError && err.code === 'INVALID_QUERY',
  );
});

it('an offset page plans as the whole query parses, from the kept plan of the query at offset 0 (random offsets are as many URLs)', () => {
  const cases = [
    '?limit=20&offset=1980',
    '?offset=7&limit=20',
    '?fields=id,name,price&limit=20&offset=33',
    '?status=active&price.amount[gte]=500&sort=-price.amount&limit=20&offset=40',
    '?offset=0',
    '?offset=007',
    '?offset=1000000',
    '?offset=1000001',
    '?offset=1234567890',
    '?offset=-1',
    '?offset=',
    '?offset=1e3',
    '?offset=%31%32',
    '?offset=5&offset=6',
    '?offset=5&off%73et=6',
    '?offset=5&page=2',
    '?offset=5&limit=0',
    '?offset=5&status=bogus',
    '?offset=5&fields=nope',
    '?offset=5&after_id=00000000-0000-0000-0000-000000000000',
  ];
  answersAsWhole(cases);
  // Pages of one query at two offsets: one kept plan of the rest, so the same filters, order and fields arrays.
  const a = planFor(v2, products, 'v2/products', '?fields=id,name&limit=20&offset=40', { fields: 'id,name', limit: '20', offset: '40' }, SECRET);
  const b = planFor(v2, products, 'v2/products', '?fields=id,name&limit=20&offset=60', { fields: 'id,name', limit: '20', offset: '60' }, SECRET);
  assert.deepEqual(
    [a.page, b.page],
    [
      { style: 'offset', limit: 20, offset: 40 },
      { style: 'offset', limit: 20, offset: 60 },
    ],
  );
  assert.equal(a.fields, b.fields);
  assert.ok(Object.isFrozen(a) && Object.isFrozen(a.page) && Object.isFrozen(a.fields));
  // An older version: its field names still become the newest's (v1's price_cents), the offset put in as on v2.
  const old = planFor(v1, products, 'v1/products', '?price_cents[gte]=300&offset=20', { 'price_cents[gte]': '300', offset: '20' }, SECRET);
  assert.deepEqual(old.page, { style: 'offset', limit: 20, offset: 20 });
  assert.equal(old.where[0]!.path, 'price.amount');
  // A refused rest is reported as the whole parse reports it, in v1's names.
  assert.throws(
    () => planFor(v1, products, 'v1/products', '?price_cents[gte]=abc&offset=20', { 'price_cents[gte]': 'abc', offset: '20' }, SECRET),
    (err: unknown) => err instanceof AppError && JSON.stringify(err.details).includes('price_cents'),
  );
});
