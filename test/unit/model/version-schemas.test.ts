// Issue 27.1: schemas derived down a three-version chain (rename, nest, computed) agree with the values the same changes translate, bodies and views alike.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { compileVersions } from '../../../src/model/versions.js';
import { translateDown, translateUp } from '../../../src/model/versions.js';
import { schemaDown, schemaInVersion } from '../../../src/model/version-schemas.js';
import type { VersionChange } from '../../../src/model/version-changes.js';

const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });

const money = { type: 'object', required: ['amount', 'currency'], additionalProperties: false, properties: { amount: { type: 'integer' }, currency: { type: 'string' } } };
/** The newest (v3) view and body of an item. */
const VIEW = {
  type: 'object',
  required: ['id', 'title', 'price'],
  additionalProperties: false,
  properties: { id: { type: 'string' }, title: { type: 'string' }, price: money, note: { type: ['string', 'null'] } },
};
const BODY = {
  type: 'object',
  required: ['title', 'price'],
  additionalProperties: false,
  properties: { title: { type: 'string' }, price: money, note: { type: ['string', 'null'] } },
};

const v1ToV2: VersionChange = { description: 'name is title', resource: 'items', fields: [{ rename: { from: 'name', to: 'title' } }] };
const v2ToV3: VersionChange = {
  description: 'money, and no label',
  resource: 'items',
  fields: [
    { nest: { into: 'price', parts: { amount: 'price_cents', currency: 'currency' } } },
    { computed: { field: 'label', description: 'the title in capitals', schema: { type: 'string' }, down: (v) => String(v.title ?? '').toUpperCase() } },
  ],
};
const versions = compileVersions([
  { name: 'v1', date: '2024-01-01', changes: [v1ToV2] },
  { name: 'v2', date: '2025-01-01', changes: [v2ToV3] },
  { name: 'v3', date: '2026-01-01' },
]);
const [v3, v2, v1] = versions as [(typeof versions)[0], (typeof versions)[0], (typeof versions)[0]];

const props = (s: Record<string, unknown>): string[] => Object.keys(s.properties as object);

describe('schemas down a three-version chain', () => {
  const cases: Array<[string, () => unknown, unknown]> = [
    ['v3 view unchanged', () => props(schemaInVersion(v3, 'items', VIEW, 'view')), ['id', 'title', 'price', 'note']],
    [
      'v2 view: price nested → price_cents + currency, label computed',
      () => props(schemaInVersion(v2, 'items', VIEW, 'view')),
      ['id', 'title', 'price_cents', 'currency', 'note', 'label'],
    ],
    ['v1 view: and title renamed back to name', () => props(schemaInVersion(v1, 'items', VIEW, 'view')), ['id', 'name', 'price_cents', 'currency', 'note', 'label']],
    ['v1 view requires what v3 requires, under v1 names', () => schemaInVersion(v1, 'items', VIEW, 'view').required, ['id', 'name', 'price_cents', 'currency', 'label']],
    [
      'v1 body: label accepted and ignored, read-only',
      () => (schemaInVersion(v1, 'items', BODY, 'body').properties as Record<string, { readOnly?: boolean }>).label!.readOnly,
      true,
    ],
    ['v1 body required', () => schemaInVersion(v1, 'items', BODY, 'body').required, ['name', 'price_cents', 'currency']],
    ['a part keeps its schema', () => (schemaInVersion(v2, 'items', VIEW, 'view').properties as Record<string, unknown>).price_cents, { type: 'integer' }],
    [
      'a nullable nested object gives nullable parts',
      () => (schemaDown(v2ToV3, { type: 'object', properties: { price: { ...money, type: ['object', 'null'] } } }, 'view').properties as Record<string, unknown>).currency,
      { type: ['string', 'null'] },
    ],
    [
      'a readOnly nest leaves bodies alone',
      () => props(schemaDown({ ...v2ToV3, fields: [{ nest: { into: 'price', parts: { amount: 'price_cents' }, readOnly: true } }] }, BODY, 'body')),
      ['title', 'price', 'note'],
    ],
  ];
  for (const [name, actual, expected] of cases) it(name, () => assert.deepEqual(actual(), expected));
});

describe('derived schemas agree with translated values', () => {
  const view = { id: 'i1', title: 'Tea', price: { amount: 250, currency: 'EUR' }, note: null };
  for (const v of [v3, v2, v1]) {
    it(`${v.name}: the newest view translated down validates against the ${v.name} view schema; a v3 view does not (unless ${v.name} is v3)`, () => {
      const validate = ajv.compile(schemaInVersion(v, 'items', VIEW, 'view'));
      const shown = translateDown(v, 'items', view);
      assert.ok(validate(shown), ajv.errorsText(validate.errors));
      assert.equal(validate(view), v === v3);
    });
    it(`${v.name}: a body valid in ${v.name}'s schema translates up to a valid newest body`, () => {
      const body =
        v === v3
          ? { title: 'Tea', price: { amount: 1, currency: 'EUR' } }
          : v === v2
            ? { title: 'Tea', price_cents: 1, currency: 'EUR', label: 'X' }
            : { name: 'Tea', price_cents: 1, currency: 'EUR' };
      assert.ok(ajv.validate(schemaInVersion(v, 'items', BODY, 'body'), body), ajv.errorsText());
      assert.ok(ajv.validate(BODY, translateUp(v, 'items', body)), ajv.errorsText());
    });
  }
});
