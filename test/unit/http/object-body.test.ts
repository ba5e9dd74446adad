// itemJson's kept texts: each view (whole or sparse fields) and ETag of a record answers its own text, however many are asked for, kept or not.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { etagOf } from '../../../src/http/rendering/conditional.js';
import { itemJson } from '../../../src/http/rendering/object-body.js';
import { represent } from '../../../src/http/rendering/render.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import type { Access, Loaded } from '../../../src/services/access.js';
import type { StoredRecord } from '../../../src/store/types.js';

const model = compileModel(withPlatform(commerce));
const newest = model.versions[0]!;
const v1 = model.versions.find((v) => v.name === 'v1')!;
const products = model.resources.get('products')!;

function product(id: string, frozen: boolean): StoredRecord {
  const record: StoredRecord = {
    id,
    version: 3,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-02-03T04:05:06.789Z',
    name: 'Kaffee ☕ 𝄞',
    description: 'a "quoted" description',
    price: { amount: 1250, currency: 'EUR' },
    status: 'active',
    tags: ['a', 'b'],
  };
  return frozen ? Object.freeze(record) : record;
}

const ACCESS: Access[] = [
  { update: true, delete: true, actions: [] },
  { update: false, delete: false, actions: [] },
  { update: true, delete: false, actions: [] },
];
/** Twelve views: more than a record keeps texts for (8), in an order that asks for each again after others. */
const VIEWS: (string[] | undefined)[] = [
  undefined,
  ['id'],
  ['name'],
  ['id', 'name'],
  ['name', 'id'],
  ['price', 'status'],
  ['status', 'price'],
  ['description'],
  ['tags', 'updated_at'],
  ['id', 'name', 'price', 'status', 'tags'],
  ['created_at'],
  ['id', 'description', 'price'],
];

for (const frozen of [true, false]) {
  it(`answers every view and tag of ${frozen ? 'a kept (frozen)' : 'an unkept'} record with its own text, five times over (alone, then in pages, flattened at the third), beyond the texts a record keeps`, () => {
    const record = product(`0190a1b2-c3d4-7e5f-8a9b-00000000000${frozen ? 1 : 2}`, frozen);
    for (let round = 0; round < 5; round++) {
      for (const access of ACCESS) {
        for (const fields of VIEWS) {
          // The field lists are new arrays each round: a view is named by its fields, not by the array.
          const asked = fields && [...fields];
          const loaded: Loaded = { record, access };
          for (const version of [newest, v1]) {
            if (version === v1 && asked) continue;
            const etag = etagOf(record, access, version.name);
            const text = itemJson(version, products, loaded, etag, asked, round > 0);
            assert.equal(text, JSON.stringify(represent(version, products, loaded, asked)), `${version.name} ${JSON.stringify(access)} ${asked?.join(',') ?? '*'}`);
          }
        }
      }
    }
  });
}
