// Table-driven tests of the collection query parser: no database, no HTTP.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commerce } from '../../examples/commerce/index.js';
import { AppError } from '../../src/errors/app-error.js';
import { compileModel } from '../../src/model/compile.js';
import { nextCursor, parseListParams, type QueryInput } from '../../src/query/list-params.js';
import { signToken } from '../../src/query/tokens.js';

const model = compileModel(commerce);
const products = model.resources.get('products')!;
const SECRET = 'unit-secret';

function fails(query: QueryInput): AppError {
  try {
    parseListParams(products, query, SECRET);
  } catch (err) {
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'INVALID_QUERY');
    assert.ok(err.details && err.details.length > 0);
    return err;
  }
  assert.fail(`expected ${JSON.stringify(query)} to be rejected`);
}

describe('parseListParams', () => {
  it('defaults to 20 rows ordered by id', () => {
    const plan = parseListParams(products, {}, SECRET);
    assert.equal(plan.limit, 20);
    assert.deepEqual(plan.orderBy, [{ path: 'id', desc: false }]);
    assert.deepEqual(plan.where, []);
  });

  const accepted: Array<[string, QueryInput, (p: ReturnType<typeof parseListParams>) => void]> = [
    ['limit 1', { limit: '1' }, (p) => assert.equal(p.limit, 1)],
    ['limit 100', { limit: '100' }, (p) => assert.equal(p.limit, 100)],
    ['equality on an enum', { status: 'active' }, (p) => assert.deepEqual(p.where, [{ path: 'status', op: 'eq', value: 'active' }])],
    ['money range', { 'price.amount[gte]': '100' }, (p) => assert.deepEqual(p.where, [{ path: 'price.amount', op: 'gte', value: 100 }])],
    ['in list', { 'status[in]': 'active,draft' }, (p) => assert.deepEqual(p.where, [{ path: 'status', op: 'in', value: ['active', 'draft'] }])],
    ['timestamp normalised', { 'created_at[lt]': '2026-01-01' }, (p) => assert.deepEqual(p.where, [{ path: 'created_at', op: 'lt', value: '2026-01-01T00:00:00.000Z' }])],
    ['two-field sort, id appended', { sort: '-price.amount,name' }, (p) => assert.deepEqual(p.orderBy, [{ path: 'price.amount', desc: true }, { path: 'name', desc: false }, { path: 'id', desc: false }])],
    ['explicit id sort ends the order', { sort: '-id' }, (p) => assert.deepEqual(p.orderBy, [{ path: 'id', desc: true }])],
    ['sparse fields', { fields: 'id,name' }, (p) => assert.deepEqual(p.fields, ['id', 'name'])],
  ];
  for (const [name, query, check] of accepted) it(`accepts ${name}`, () => check(parseListParams(products, query, SECRET)));

  const rejected: Array<[string, QueryInput]> = [
    ['limit 101', { limit: '101' }],
    ['limit 0', { limit: '0' }],
    ['negative limit', { limit: '-1' }],
    ['non-numeric limit', { limit: 'ten' }],
    ['repeated limit', { limit: ['1', '2'] }],
    ['sort on a write-only or unknown field', { sort: 'password' }],
    ['sort on a non-sortable field', { sort: 'status' }],
    ['fields naming a hidden field', { fields: 'password' }],
    ['unknown filter', { nonexistent: '1' }],
    ['non-filterable field', { name: 'x' }],
    ['unknown operator', { 'price.amount[foo]': '1' }],
    ['malformed integer', { 'price.amount[gte]': '1e3' }],
    ['bad enum', { status: 'sold' }],
    ['bad timestamp', { 'created_at[gt]': 'yesterday' }],
    ['SQL in a filter key', { "status' OR 1=1 --": 'x' }],
    ['SQL in a sort', { sort: 'name;DROP TABLE products' }],
    ['SQL in a value', { 'price.amount[gt]': '0 OR 1=1' }],
    ['a forged cursor', { cursor: 'abc.def' }],
    ['a pagination style not yet available', { offset: '10' }],
  ];
  for (const [name, query] of rejected) it(`rejects ${name}`, () => void fails(query));

  it('reports one detail per problem', () => {
    const err = fails({ limit: '0', sort: 'password', nonexistent: '1' });
    assert.deepEqual(err.details!.map((d) => d.field).sort(), ['limit', 'nonexistent', 'sort']);
  });

  it('round-trips a cursor and rejects it for another sort, a tampered payload or another secret', () => {
    const plan = parseListParams(products, { sort: 'name' }, SECRET);
    const cursor = nextCursor(plan, { id: '01a1ffe4-67fd-73dd-aa99-0be44c299d25', name: 'Mug' }, SECRET);
    assert.deepEqual(parseListParams(products, { sort: 'name', cursor }, SECRET).after, ['Mug', '01a1ffe4-67fd-73dd-aa99-0be44c299d25']);
    fails({ sort: '-name', cursor });
    fails({ cursor });
    const [body, mac] = cursor.split('.');
    const tampered = `${Buffer.from(JSON.stringify({ v: 1, s: 'x', a: ['Z', 'z'] })).toString('base64url')}.${mac}`;
    fails({ sort: 'name', cursor: tampered });
    fails({ sort: 'name', cursor: body! });
    assert.throws(() => parseListParams(products, { sort: 'name', cursor }, 'other-secret'), AppError);
    fails({ sort: 'name', cursor: signToken({ v: 1, s: plan.shape, a: ['only one'] }, SECRET) });
  });
});
