// The written item text is JSON.stringify of the represented object, byte for byte: every resource, generated records, links and sparse fields; the generic path where it alone is exact.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { itemText } from '../../../src/http/rendering/item-text.js';
import { represent } from '../../../src/http/rendering/render.js';
import { compileModel, type CompiledResource } from '../../../src/model/compile.js';
import type { FieldType } from '../../../src/model/types.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import type { Loaded } from '../../../src/services/access.js';
import type { StoredRecord } from '../../../src/store/types.js';

/** A small deterministic generator (mulberry32), so that a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = ['', 'plain', 'quote " and \\ backslash', 'line\nbreak\ttab', 'ünïcödé ☕ 𝄞', '\u0000\u001f control', '\ud800 lone surrogate', '</script>', '1e3'];
const NUMBERS = [0, -0, 1, -42, 3.5, 1e21, -1e-7, Number.MAX_SAFE_INTEGER, 123456789.125];

function valueOf(type: FieldType, next: () => number): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const roll = next();
  if (roll < 0.1) return null;
  if (roll < 0.15) return undefined;
  switch (type) {
    case 'integer':
      return pick(NUMBERS);
    case 'boolean':
      return next() < 0.5;
    case 'money':
      return { amount: pick(NUMBERS), currency: pick(['EUR', 'USD', '"?']) };
    case 'string[]':
      return Array.from({ length: Math.floor(next() * 4) }, () => pick(STRINGS));
    case 'object':
      return { a: pick(STRINGS), n: pick(NUMBERS), nested: { list: [1, 'two', null, true] } };
    default:
      return pick(STRINGS);
  }
}

function recordOf(r: CompiledResource, next: () => number): StoredRecord {
  const record: StoredRecord = {
    id: `0190a1b2-c3d4-7e5f-8a9b-${Math.floor(next() * 1e12)
      .toString(16)
      .padStart(12, '0')}`,
    version: 1 + Math.floor(next() * 9),
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-02-03T04:05:06.789Z',
  };
  for (const [name, def] of Object.entries(r.fields)) {
    const value = valueOf(def.type, next);
    if (value !== undefined) record[name] = value;
  }
  return record;
}

function loadedOf(r: CompiledResource, record: StoredRecord, next: () => number): Loaded {
  const actions = Object.keys(r.def.actions ?? {}).filter(() => next() < 0.5);
  return { record, access: { update: next() < 0.5, delete: next() < 0.5, actions } };
}

/** A subset of the rendered names in a shuffled order (sparse fields keep the order the client wrote). */
function fieldsOf(r: CompiledResource, next: () => number): string[] {
  const chosen = r.rendered.filter(() => next() < 0.4);
  for (let i = chosen.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [chosen[i], chosen[j]] = [chosen[j]!, chosen[i]!];
  }
  return chosen.length > 0 ? chosen : [r.rendered[0]!];
}

for (const inPath of [true, false]) {
  it(`writes exactly JSON.stringify(represent(…)) for every resource, record, set of links and sparse fields (versions ${inPath ? 'in the path' : 'elsewhere'})`, () => {
    const model = compileModel(withPlatform(commerce), { versionsInPath: inPath });
    const newest = model.versions[0]!;
    let compared = 0;
    for (const r of model.resources.values()) {
      for (let seed = 1; seed <= 60; seed++) {
        const next = random(seed * 7919 + r.name.length);
        const loaded = loadedOf(r, recordOf(r, next), next);
        const fields = seed % 3 === 0 ? fieldsOf(r, next) : undefined;
        const written = itemText(newest, r, loaded, fields);
        assert.equal(written, JSON.stringify(represent(newest, r, loaded, fields)), `${r.name}, seed ${seed}`);
        compared++;
      }
    }
    assert.ok(compared >= 60 * 5, `compared ${compared} texts`);
  });
}

it('leaves older versions to the generic path, whose views change modules translate', () => {
  const model = compileModel(commerce);
  const products = model.resources.get('products')!;
  const v1 = model.versions.find((v) => v.name === 'v1')!;
  const loaded = loadedOf(products, recordOf(products, random(3)), random(4));
  assert.equal(itemText(v1, products, loaded, undefined), undefined);
  assert.ok(JSON.stringify(represent(v1, products, loaded)).includes('"price_cents"'));
});

it('leaves a resource to the generic path when a field is named links or as an array index, where JSON orders keys otherwise', () => {
  const model = compileModel(commerce);
  const products = model.resources.get('products')!;
  const loaded = loadedOf(products, recordOf(products, random(5)), random(6));
  for (const odd of ['links', '0', '12']) {
    const r: CompiledResource = { ...products, rendered: [...products.rendered, odd] };
    assert.equal(itemText(model.versions[0]!, r, loaded, undefined), undefined, odd);
  }
  // A name that merely looks numeric is an ordinary key.
  const r: CompiledResource = { ...products, rendered: [...products.rendered, '01'] };
  const record = { ...loaded.record, '01': 'x' };
  assert.equal(itemText(model.versions[0]!, r, { ...loaded, record }, undefined), JSON.stringify(represent(model.versions[0]!, r, { ...loaded, record })));
});
