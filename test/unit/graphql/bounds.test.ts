// Depth and cost of operations, by table (src/graphql/bounds.ts), and arguments named as REST's parameters (src/graphql/list-args.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getOperationAST, parse } from 'graphql';
import { commerce } from '../../../examples/commerce/index.js';
import { buildCatalog } from '../../../src/catalog/catalog.js';
import { measure } from '../../../src/graphql/bounds.js';
import { argumentOf, planOf } from '../../../src/graphql/list-args.js';
import { buildSchema } from '../../../src/graphql/schema.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/app-def.js';

const model = compileModel(withPlatform(commerce));
const schema = buildSchema(model, buildCatalog(model));

function measured(query: string, variables: Record<string, unknown> = {}, stopAt = 50): { depth: number; cost: number } {
  const document = parse(query);
  return measure(schema, document, getOperationAST(document)!, variables, stopAt);
}

describe('measure', () => {
  const table: Array<[string, number, number, string]> = [
    ['{ __typename }', 0, 0, 'introspection counts nothing'],
    ['{ product(id: "x") { id name } }', 2, 1, 'an object field 1, its leaves 0'],
    ['{ product(id: "x") { price { amount } } }', 3, 2, 'money is an object'],
    ['{ products { edges { node { id } } } }', 4, 41, 'first defaults to 20: 1 + 20 × (edges 1 + node 1)'],
    ['{ products(first: 5) { edges { node { id } } pageInfo { hasNextPage } } }', 4, 16, '1 + 5 × (2 + pageInfo 1)'],
    ['{ orders(first: 20) { edges { node { user { id } items { product { id } } } } } }', 6, 1 + 20 * (1 + 1 + 1 + (1 + 20 * 1)), 'the batched query of issue 29.4'],
    ['{ products(first: 2) { ...P } } fragment P on ProductConnection { edges { node { id } } }', 4, 5, 'fragments count in place'],
    ['{ products(first: 2) { edges { node { ... on Product { price { amount } } } } } }', 5, 7, 'inline fragments too'],
    ['mutation { createProduct(input: {}) { id reviews(first: 3) { user { id } } } }', 4, 1 + (1 + 3 * 1), 'mutations alike'],
    ['{ products(first: 1000) { edges { node { id } } } }', 4, 1 + 100 * 2, 'a first the query layer refuses counts as the largest page'],
  ];
  for (const [query, depth, cost, why] of table) {
    it(why, () => assert.deepEqual(measured(query), { depth, cost }, query));
  }

  it('takes first from variables, then the operation’s defaults', () => {
    const q = 'query ($n: Int = 3) { products(first: $n) { edges { node { id } } } }';
    assert.equal(measured(q).cost, 1 + 3 * 2);
    assert.equal(measured(q, { n: 7 }).cost, 1 + 7 * 2);
  });

  it('stops walking past the limit: a depth over it is all it needs to say', () => {
    const deep = '{ users { edges { node { orders { items { product { reviews { user { orders { items { id } } } } } } } } } } }';
    assert.ok(measured(deep, {}, 10).depth > 10);
    assert.equal(measured(deep).depth, 11);
  });
});

describe('connection arguments as REST parameters', () => {
  const products = model.resources.get('products')!;

  it('names each REST parameter back as the argument it came from', () => {
    assert.equal(argumentOf('limit'), 'first');
    assert.equal(argumentOf('cursor'), 'after');
    assert.equal(argumentOf('sort'), 'sort');
    assert.equal(argumentOf('price.amount[gte]'), 'filter.price.amount.gte');
    assert.equal(argumentOf('created_at'), 'filter.createdAt.eq');
  });

  it('makes REST’s plan: filters typed, the sort in model names with its id tie-break, the page size', () => {
    const plan = planOf(
      products,
      { first: 5, filter: { status: { in: ['active', 'draft'] }, price: { amount: { gte: 100, lt: null } } }, sort: '-createdAt' },
      'secret',
      'graphql:products',
    );
    assert.deepEqual(plan.where, [
      { path: 'price.amount', op: 'gte', value: 100 },
      { path: 'status', op: 'in', value: ['active', 'draft'] },
    ]);
    assert.deepEqual(plan.orderBy, [
      { path: 'created_at', desc: true },
      { path: 'id', desc: true },
    ]);
    assert.equal(plan.page.limit, 5);
  });

  it('refuses what REST refuses, in the arguments’ names; an in-value with a comma, which REST cannot say', () => {
    assert.throws(
      () => planOf(products, { first: 0, sort: 'nope', filter: { createdAt: { gt: 'yesterday' } } }, 'secret', 'graphql:products'),
      (e: { code: string; details: Array<{ field: string }> }) =>
        e.code === 'INVALID_QUERY' &&
        e.details
          .map((d) => d.field)
          .sort()
          .join() === 'filter.createdAt.gt,first,sort',
    );
    assert.throws(
      () => planOf(products, { filter: { id: { in: ['a,b'] } } }, 'secret', 'graphql:products'),
      (e: { code: string; details: Array<{ field: string }> }) => e.code === 'INVALID_QUERY' && e.details[0]!.field === 'filter.id.in',
    );
  });
});
