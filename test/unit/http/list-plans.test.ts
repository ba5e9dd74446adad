// List plans kept per collection and query string: the same frozen plan for the same query, another for another secret or version, refusals never kept.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { AppError } from '../../../src/errors/app-error.js';
import { planFor } from '../../../src/http/routes/list-plans.js';
import { compileModel } from '../../../src/model/compile.js';

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
