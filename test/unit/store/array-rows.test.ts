// Rows read as arrays decode to the same records as rows read as objects, for every field type and for nulls, in any column order.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { compileModel } from '../../../src/model/compile.js';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import { arrayRowDecoder, fromRow, type Row } from '../../../src/store/sql/rows.js';
import { sqliteCodec } from '../../../src/store/sqlite/rows.js';

const permissions = { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] };
const people = defineResource({ name: 'people', singular: 'person', fields: { email: f.email({ required: true }), role: f.enum(['admin', 'customer']) }, permissions });
const things = defineResource({
  name: 'things',
  singular: 'thing',
  fields: {
    label: f.string(),
    owner: f.uuid(),
    count: f.integer(),
    done: f.boolean(),
    kind: f.enum(['a', 'b']),
    due: f.timestamp(),
    price: f.money(),
    tags: f.strings(),
    extra: f.object(),
  },
  permissions,
});
const r = compileModel(defineApp({ resources: [people, things], users: 'people' })).resources.get('things')!;

const full: Row = {
  rid: 7,
  id: '01890a5d-ac96-774b-bcce-b302099a8057',
  version: 3,
  created_at: '2026-11-26T08:00:00.000Z',
  updated_at: '2026-11-26T09:00:00.000Z',
  label: 'Lamp',
  owner: '01890a5d-ac96-774b-bcce-b302099a8058',
  count: 12,
  done: 1,
  kind: 'b',
  due: '2027-01-01T00:00:00.000Z',
  price_amount: 4900,
  price_currency: 'EUR',
  tags: '["x","y"]',
  extra: '{"a":{"b":[1,2]}}',
  _rank: -1.5,
};
const empty: Row = { ...full, label: null, owner: null, count: null, done: 0, kind: null, due: null, price_amount: null, price_currency: null, tags: null, extra: null };

it('decodes arrays as fromRow decodes objects, whatever the column order (extra columns ignored)', () => {
  for (const row of [full, empty]) {
    for (const columns of [Object.keys(row), Object.keys(row).reverse()]) {
      const decode = arrayRowDecoder(r, columns, sqliteCodec);
      assert.deepEqual(decode(columns.map((c) => row[c])), fromRow(r, row, sqliteCodec));
    }
  }
});

it('refuses a result that lacks a column of the resource', () => {
  assert.throws(
    () =>
      arrayRowDecoder(
        r,
        Object.keys(full).filter((c) => c !== 'price_currency'),
        sqliteCodec,
      ),
    /column price_currency of things/,
  );
});
