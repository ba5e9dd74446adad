// Issue 14.2: version changes are declarative field mappings; one description translates bodies up, views down, field paths both ways and documents itself, and chains compose across three versions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileModel, versionOf } from '../../../src/model/compile.js';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import { bodyUp, describeChange, pathDown, pathUp, viewDown, type VersionChange } from '../../../src/model/version-changes.js';
import { translateDown, translatePathDown, translatePathUp, translateUp, type VersionDef } from '../../../src/model/versions.js';

const rename: VersionChange = { description: 'name is full_name', resource: 'people', fields: [{ rename: { from: 'name', to: 'full_name' } }] };
const nest: VersionChange = { description: 'price is money', resource: 'items', fields: [{ nest: { into: 'price', parts: { amount: 'price_cents', currency: 'currency' } } }] };
const computed: VersionChange = {
  description: 'label gone',
  resource: 'items',
  fields: [{ computed: { field: 'label', description: 'the title in capitals', schema: { type: 'string' }, down: (v) => String(v.title ?? '').toUpperCase() } }],
};

describe('one change', () => {
  const cases: Array<[string, () => unknown, unknown]> = [
    ['rename: body up', () => bodyUp(rename, { name: 'Ada', email: 'a@x' }), { full_name: 'Ada', email: 'a@x' }],
    ['rename: view down', () => viewDown(rename, { full_name: 'Ada', id: '1' }), { name: 'Ada', id: '1' }],
    ['rename: a body without the field passes unchanged', () => bodyUp(rename, { email: 'a@x' }), { email: 'a@x' }],
    ['nest: body up', () => bodyUp(nest, { price_cents: 1250, currency: 'EUR', title: 't' }), { title: 't', price: { amount: 1250, currency: 'EUR' } }],
    ['nest: a patch of one part nests that part only', () => bodyUp(nest, { price_cents: 99 }), { price: { amount: 99 } }],
    ['nest: null for every part clears the field', () => bodyUp(nest, { price_cents: null, currency: null }), { price: null }],
    ['nest: view down', () => viewDown(nest, { price: { amount: 1250, currency: 'EUR' }, title: 't' }), { title: 't', price_cents: 1250, currency: 'EUR' }],
    ['nest: a null object shows null parts', () => viewDown(nest, { price: null }), { price_cents: null, currency: null }],
    ['computed: shown to old clients', () => viewDown(computed, { title: 'tea' }), { title: 'tea', label: 'TEA' }],
    ['computed: dropped when an old client sends it', () => bodyUp(computed, { title: 'tea', label: 'X' }), { title: 'tea' }],
    [
      'paths up',
      () => [pathUp(rename, 'name'), pathUp(nest, 'price_cents'), pathUp(nest, 'currency'), pathUp(nest, 'title'), pathUp(computed, 'label')],
      ['full_name', 'price.amount', 'price.currency', 'title', undefined],
    ],
    [
      'paths down',
      () => [pathDown(rename, 'full_name'), pathDown(nest, 'price.amount'), pathDown(nest, 'price.currency'), pathDown(nest, 'price'), pathDown(nest, 'title')],
      ['name', 'price_cents', 'currency', 'price_cents', 'title'],
    ],
    [
      'described in words',
      () => [...describeChange(rename), ...describeChange(nest), ...describeChange(computed)],
      [
        'people: `name` is now `full_name`.',
        'items: `price_cents` → `price.amount`, `currency` → `price.currency` (one object field `price`).',
        'items: `label` is gone; older versions still show it (the title in capitals).',
      ],
    ],
  ];
  for (const [name, run, expected] of cases) it(name, () => assert.deepEqual(run(), expected));
});

describe('a chain of three versions owned by the app', () => {
  const permissions = { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] };
  const people = defineResource({
    name: 'people',
    singular: 'person',
    fields: { email: f.email({ required: true }), role: f.enum(['admin', 'customer'], { default: 'customer' }), full_name: f.string() },
    permissions,
  });
  const items = defineResource({ name: 'items', singular: 'item', fields: { title: f.string({ required: true }), price: f.money({ required: true }) }, permissions });
  const versions: VersionDef[] = [
    { name: 'v1', date: '2025-01-01', changes: [rename, computed] },
    { name: 'v2', date: '2025-06-01', changes: [nest] },
    { name: 'v3', date: '2026-01-01' },
  ];
  const model = compileModel(defineApp({ resources: [people, items], users: 'people', versions }));
  const [v1, v2, v3] = ['v1', 'v2', 'v3'].map((n) => versionOf(model, n)!);

  it('compiles newest first, each version linked to the next', () => {
    assert.deepEqual(
      model.versions.map((v) => v.name),
      ['v3', 'v2', 'v1'],
    );
    assert.equal(v1!.newer, v2);
    assert.equal(v2!.newer, v3);
    assert.equal(v3!.newer, undefined);
  });

  it('a v1 body reaches the v3 shape through both changes, and a v2 body through one', () => {
    assert.deepEqual(translateUp(v1!, 'items', { title: 't', price_cents: 5, currency: 'EUR', label: 'ignored' }), { title: 't', price: { amount: 5, currency: 'EUR' } });
    assert.deepEqual(translateUp(v2!, 'items', { title: 't', price_cents: 5, currency: 'EUR' }), { title: 't', price: { amount: 5, currency: 'EUR' } });
    assert.deepEqual(translateUp(v3!, 'items', { title: 't', price: { amount: 5, currency: 'EUR' } }), { title: 't', price: { amount: 5, currency: 'EUR' } });
    assert.deepEqual(translateUp(v1!, 'people', { name: 'Ada' }), { full_name: 'Ada' });
  });

  it('a v3 view goes down to each older version, newest change undone first', () => {
    const view = { id: '1', title: 'tea', price: { amount: 5, currency: 'EUR' } };
    assert.deepEqual(translateDown(v3!, 'items', view), view);
    assert.deepEqual(translateDown(v2!, 'items', view), { id: '1', title: 'tea', price_cents: 5, currency: 'EUR' });
    assert.deepEqual(translateDown(v1!, 'items', view), { id: '1', title: 'tea', price_cents: 5, currency: 'EUR', label: 'TEA' });
  });

  it('field paths: filters and sorts of old clients up, error details down', () => {
    assert.equal(translatePathUp(v1!, 'items', 'price_cents'), 'price.amount');
    assert.equal(translatePathUp(v1!, 'people', 'name'), 'full_name');
    assert.equal(translatePathUp(v1!, 'items', 'label'), undefined);
    assert.equal(translatePathDown(v1!, 'items', 'price.currency'), 'currency');
    assert.equal(translatePathDown(v2!, 'people', 'full_name'), 'full_name', 'v2 already says full_name');
    assert.equal(translatePathDown(v1!, 'people', 'full_name'), 'name');
  });

  it('refuses chains that cannot be right', () => {
    const app = (vs: VersionDef[]) => () => compileModel(defineApp({ resources: [people, items], users: 'people', versions: vs }));
    assert.throws(
      app([
        { name: 'v1', date: '2025-01-01', changes: [{ description: 'x', resource: 'nope', fields: [] }] },
        { name: 'v2', date: '2026-01-01' },
      ]),
      /unknown resource nope/,
    );
    assert.throws(
      app([
        { name: 'v1', date: '2025-01-01', changes: [{ description: 'x', resource: 'items', fields: [{ rename: { from: 'a', to: 'missing' } }] }] },
        { name: 'v2', date: '2026-01-01' },
      ]),
      /items\.missing is not a field/,
    );
    assert.throws(
      app([
        { name: 'v1', date: '2026-01-01' },
        { name: 'v2', date: '2025-01-01' },
      ]),
      /must be older/,
    );
    assert.throws(app([{ name: 'v1', date: '2025-01-01', changes: [rename] }]), /is the newest/);
    assert.throws(
      app([
        { name: 'v1', date: '2025-01-01' },
        { name: 'v1', date: '2026-01-01' },
      ]),
      /defined twice/,
    );
  });
});
