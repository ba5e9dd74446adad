// Table tests of the model's JSON Schema generation: one field type per row, and which fields a body may carry per operation and role (issue 14.8).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileModel } from '../../../src/model/compile.js';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import { MAX_AMOUNT } from '../../../src/model/money.js';
import { bodySchema, fieldSchema } from '../../../src/model/schema.js';
import type { FieldDef } from '../../../src/model/types.js';

describe('fieldSchema', () => {
  const cases: Array<[string, FieldDef, Record<string, unknown>]> = [
    ['a required string', f.string({ required: true, minLength: 1, maxLength: 5 }), { type: 'string', minLength: 1, maxLength: 5 }],
    ['an optional string is nullable', f.string({ maxLength: 5 }), { type: ['string', 'null'], maxLength: 5 }],
    ['a default makes it not nullable', f.string({ default: 'x' }), { type: 'string', maxLength: 1000, default: 'x' }],
    ['an email', f.email({ required: true }), { type: 'string', format: 'email', maxLength: 254 }],
    ['a uuid', f.uuid({ required: true }), { type: 'string', format: 'uuid' }],
    ['an integer with bounds', f.integer({ required: true, minimum: 1, maximum: 5 }), { type: 'integer', minimum: 1, maximum: 5 }],
    ['an optional enum admits null', f.enum(['a', 'b']), { type: ['string', 'null'], enum: ['a', 'b', null] }],
    ['a timestamp', f.timestamp({ required: true }), { type: 'string', format: 'date-time' }],
    [
      'money, bounded by MAX_AMOUNT',
      f.money({ required: true }),
      {
        type: 'object',
        required: ['amount', 'currency'],
        additionalProperties: false,
        properties: { amount: { type: 'integer', minimum: 0, maximum: MAX_AMOUNT }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
      },
    ],
    [
      'money asks for more than the bound: the bound wins',
      f.money({ required: true, maximum: Number.MAX_SAFE_INTEGER }),
      {
        type: 'object',
        required: ['amount', 'currency'],
        additionalProperties: false,
        properties: { amount: { type: 'integer', minimum: 0, maximum: MAX_AMOUNT }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
      },
    ],
    ['strings', f.strings({ default: [] }), { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 100 }, default: [] }],
    ['an untyped object', f.object({ required: true }), { type: 'object' }],
    [
      'a typed object is closed',
      f.object({ required: true, properties: { n: f.integer({ required: true }) } }),
      { type: 'object', additionalProperties: false, properties: { n: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER } }, required: ['n'] },
    ],
    [
      'description and examples are carried',
      f.string({ required: true, description: 'd', examples: ['e'] }),
      { type: 'string', maxLength: 1000, description: 'd', examples: ['e'] },
    ],
  ];
  for (const [name, field, expected] of cases) it(name, () => assert.deepEqual(fieldSchema(field), expected));
});

describe('bodySchema: who may send what', () => {
  const permissions = { read: ['admin'], create: ['admin', 'customer'], update: ['admin', 'customer'], delete: ['admin'] };
  const people = defineResource({
    name: 'people',
    singular: 'person',
    fields: { email: f.email({ required: true }), role: f.enum(['admin', 'customer'], { default: 'customer', writableBy: ['admin'] }) },
    permissions,
  });
  const things = defineResource({
    name: 'things',
    singular: 'thing',
    permissions,
    fields: {
      name: f.string({ required: true }),
      code: f.string({ createOnly: true }),
      secret: f.string({ hidden: true }),
      computed: f.string({ readOnly: true }),
      password: f.string({ writeOnly: true, virtual: true }),
    },
  });
  const model = compileModel(defineApp({ resources: [people, things], users: 'people' }));
  const cases: Array<[string, string, 'create' | 'replace', string, string[]]> = [
    ['create as customer', 'things', 'create', 'customer', ['name', 'code', 'password']],
    ['replace drops create-only fields', 'things', 'replace', 'customer', ['name', 'password']],
    ['a role only admins assign', 'people', 'create', 'customer', ['email']],
    ['which admins may send', 'people', 'create', 'admin', ['email', 'role']],
  ];
  for (const [name, resource, op, role, fields] of cases) {
    it(name, () => assert.deepEqual(Object.keys(bodySchema(model.resources.get(resource)!, op, role).properties as object).sort(), [...fields].sort()));
  }
});
