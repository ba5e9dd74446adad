// Table-driven tests of the collection query parser: no database, no HTTP.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { AppError } from '../../../src/errors/app-error.js';
import { compileModel } from '../../../src/model/compile.js';
import { encodeNext, parseListParams, type QueryInput } from '../../../src/query/list-params.js';
import { signToken } from '../../../src/query/tokens.js';

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
    assert.deepEqual(plan.page, { style: 'cursor', limit: 20 });
    assert.deepEqual(plan.orderBy, [{ path: 'id', desc: false }]);
    assert.deepEqual(plan.where, []);
  });

  const accepted: Array<[string, QueryInput, (p: ReturnType<typeof parseListParams>) => void]> = [
    ['limit 1', { limit: '1' }, (p) => assert.deepEqual(p.page, { style: 'cursor', limit: 1 })],
    ['limit 100', { limit: '100' }, (p) => assert.deepEqual(p.page, { style: 'cursor', limit: 100 })],
    ['offset style', { offset: '40', limit: '10' }, (p) => assert.deepEqual(p.page, { style: 'offset', limit: 10, offset: 40 })],
    ['offset style, default limit', { offset: '0' }, (p) => assert.deepEqual(p.page, { style: 'offset', limit: 20, offset: 0 })],
    ['page style', { page: '3', per_page: '25' }, (p) => assert.deepEqual(p.page, { style: 'page', limit: 25, page: 3, offset: 50 })],
    ['token style', { page_size: '5' }, (p) => assert.deepEqual(p.page, { style: 'token', limit: 5 })],
    [
      'keyset style',
      { after_id: '01A1FFE4-67FD-73DD-AA99-0BE44C299D25', limit: '7' },
      (p) => assert.deepEqual(p.page, { style: 'keyset', limit: 7, afterId: '01a1ffe4-67fd-73dd-aa99-0be44c299d25' }),
    ],
    ['keyset descending by id', { after_id: '01a1ffe4-67fd-73dd-aa99-0be44c299d25', sort: '-id' }, (p) => assert.deepEqual(p.orderBy, [{ path: 'id', desc: true }])],
    [
      'search ranks first',
      { q: 'burr grinder' },
      (p) =>
        assert.deepEqual(p.orderBy, [
          { path: '_rank', desc: false },
          { path: 'id', desc: false },
        ]),
    ],
    [
      'search with an explicit sort',
      { q: 'mug', sort: 'name' },
      (p) =>
        assert.deepEqual(p.orderBy, [
          { path: 'name', desc: false },
          { path: 'id', desc: false },
        ]),
    ],
    ['equality on an enum', { status: 'active' }, (p) => assert.deepEqual(p.where, [{ path: 'status', op: 'eq', value: 'active' }])],
    ['money range', { 'price.amount[gte]': '100' }, (p) => assert.deepEqual(p.where, [{ path: 'price.amount', op: 'gte', value: 100 }])],
    ['in list', { 'status[in]': 'active,draft' }, (p) => assert.deepEqual(p.where, [{ path: 'status', op: 'in', value: ['active', 'draft'] }])],
    ['timestamp normalised', { 'created_at[lt]': '2026-01-01' }, (p) => assert.deepEqual(p.where, [{ path: 'created_at', op: 'lt', value: '2026-01-01T00:00:00.000Z' }])],
    [
      'two-field sort, id appended in the direction of the first key',
      { sort: '-price.amount,name' },
      (p) =>
        assert.deepEqual(p.orderBy, [
          { path: 'price.amount', desc: true },
          { path: 'name', desc: false },
          { path: 'id', desc: true },
        ]),
    ],
    [
      'ascending sort, id ascending',
      { sort: 'name' },
      (p) =>
        assert.deepEqual(p.orderBy, [
          { path: 'name', desc: false },
          { path: 'id', desc: false },
        ]),
    ],
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
    ['a forged page token', { page_token: 'abc.def' }],
    ['negative offset', { offset: '-1' }],
    ['page 0', { page: '0' }],
    ['per_page 101', { per_page: '101' }],
    ['page_size 0', { page_size: '0' }],
    ['after_id not a uuid', { after_id: '42' }],
    ['after_id with another sort', { after_id: '01a1ffe4-67fd-73dd-aa99-0be44c299d25', sort: 'name' }],
    ['offset with cursor', { offset: '1', cursor: 'x' }],
    ['page with limit', { page: '1', limit: '10' }],
    ['token with offset', { page_size: '10', offset: '0' }],
    ['after_id with cursor', { after_id: '01a1ffe4-67fd-73dd-aa99-0be44c299d25', cursor: 'x' }],
    ['empty search', { q: '  ' }],
    ['a bad filter beside a search', { q: 'x', status: 'nope' }],
  ];
  for (const [name, query] of rejected) it(`rejects ${name}`, () => void fails(query));

  it('refuses q on a resource without searchable fields', () => {
    assert.throws(
      () => parseListParams(model.resources.get('users')!, { q: 'ada' }, SECRET),
      (e: unknown) => e instanceof AppError && e.details?.[0]?.field === 'q',
    );
  });

  it('reports one detail per problem', () => {
    const err = fails({ limit: '0', sort: 'password', nonexistent: '1' });
    assert.deepEqual(err.details!.map((d) => d.field).sort(), ['limit', 'nonexistent', 'sort']);
  });

  it('round-trips a cursor and rejects it for another sort, a tampered payload or another secret', () => {
    const plan = parseListParams(products, { sort: 'name' }, SECRET);
    const cursor = encodeNext(plan, { id: '01a1ffe4-67fd-73dd-aa99-0be44c299d25', name: 'Mug' }, undefined, SECRET);
    assert.deepEqual(parseListParams(products, { sort: 'name', cursor }, SECRET).page, { style: 'cursor', limit: 20, after: ['Mug', '01a1ffe4-67fd-73dd-aa99-0be44c299d25'] });
    // A cursor is not a page token.
    fails({ sort: 'name', page_token: cursor });
    fails({ sort: '-name', cursor });
    fails({ cursor });
    const [body, mac] = cursor.split('.');
    const tampered = `${Buffer.from(JSON.stringify({ v: 1, s: 'x', a: ['Z', 'z'] })).toString('base64url')}.${mac}`;
    fails({ sort: 'name', cursor: tampered });
    fails({ sort: 'name', cursor: body! });
    assert.throws(() => parseListParams(products, { sort: 'name', cursor }, 'other-secret'), AppError);
    fails({ sort: 'name', cursor: signToken({ v: 1, k: 'c', s: plan.shape, a: ['only one'] }, SECRET) });
  });
});
