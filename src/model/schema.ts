// JSON Schema (draft 2020-12 subset Ajv understands) for request bodies, generated from the model per operation and role.
import type { CompiledResource } from './compile.js';
import type { FieldDef } from './types.js';
import { MAX_AMOUNT } from './money.js';

export type WriteOp = 'create' | 'replace';

export type JsonSchema = Record<string, unknown>;

/** Whether a caller with `role` may send `field` in a body for `op`. */
export function isWritable(field: FieldDef, op: WriteOp, role: string): boolean {
  if (field.readOnly || field.hidden) return false;
  if (field.writableBy && !field.writableBy.includes(role)) return false;
  if (op === 'replace' && field.createOnly) return false;
  return true;
}

/** Optional fields without a default are nullable: omitting them stores null (PUT resets them). */
export function isNullable(field: FieldDef): boolean {
  return !field.required && field.default === undefined;
}

const MAX_INT = Number.MAX_SAFE_INTEGER;

export function fieldSchema(field: FieldDef): JsonSchema {
  let s: JsonSchema;
  switch (field.type) {
    case 'string':
      s = {
        type: 'string',
        ...(field.minLength !== undefined ? { minLength: field.minLength } : {}),
        ...(field.maxLength !== undefined ? { maxLength: field.maxLength } : {}),
        ...(field.pattern ? { pattern: field.pattern } : {}),
      };
      break;
    case 'email':
      s = { type: 'string', format: 'email', maxLength: field.maxLength ?? 254 };
      break;
    case 'uuid':
      s = { type: 'string', format: 'uuid' };
      break;
    case 'integer':
      s = { type: 'integer', minimum: field.minimum ?? -MAX_INT, maximum: field.maximum ?? MAX_INT };
      break;
    case 'boolean':
      s = { type: 'boolean' };
      break;
    case 'enum':
      s = { type: 'string', enum: [...(field.values ?? [])] };
      break;
    case 'timestamp':
      s = { type: 'string', format: 'date-time' };
      break;
    case 'money':
      s = {
        type: 'object',
        required: ['amount', 'currency'],
        additionalProperties: false,
        properties: {
          amount: { type: 'integer', minimum: field.minimum ?? 0, maximum: Math.min(field.maximum ?? MAX_AMOUNT, MAX_AMOUNT) },
          // ISO 4217 alphabetic code.
          currency: { type: 'string', pattern: '^[A-Z]{3}$' },
        },
      };
      break;
    case 'object':
      // A copy: the lines below add defaults and nullability to it, and the shared schema must stay as it is.
      s = field.properties ? { ...objectSchemaOf(field.properties) } : { type: 'object' };
      if (field.list) s = { type: 'array', items: s };
      break;
    case 'string[]':
      s = { type: 'array', maxItems: field.maxItems ?? 100, items: { type: 'string', minLength: 1, maxLength: field.maxLength ?? 100 } };
      break;
  }
  if (field.default !== undefined) s.default = field.default;
  if (field.description) s.description = field.description;
  if (field.examples) s.examples = [...field.examples];
  if (isNullable(field)) {
    s.type = [s.type as string, 'null'];
    if (Array.isArray(s.enum)) s.enum = [...(s.enum as unknown[]), null];
  }
  return s;
}

/** Schemas of property sets already built, by the definition's object: validators compile once per schema object. */
const objectSchemas = new WeakMap<Record<string, FieldDef>, JsonSchema>();

/** A closed object of typed properties: the body of an action, or a typed `object` field; one schema object per definition. */
export function objectSchemaOf(properties: Record<string, FieldDef>): JsonSchema {
  const known = objectSchemas.get(properties);
  if (known) return known;
  const props: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, field] of Object.entries(properties)) {
    props[name] = fieldSchema(field);
    if (field.required) required.push(name);
  }
  const schema = { type: 'object', additionalProperties: false, properties: props, required };
  objectSchemas.set(properties, schema);
  return schema;
}

/** The fields of an action that declares none: one shared object, so its schema (and validator) is built once. */
const NO_FIELDS: Record<string, FieldDef> = Object.freeze({});

/** The body schema of a POST action: its `input`, or without one the empty object (`{}` or no body; anything else is 422). */
export function actionInputSchema(input: Record<string, FieldDef> | undefined): JsonSchema {
  return objectSchemaOf(input ?? NO_FIELDS);
}

export function bodySchema(resource: CompiledResource, op: WriteOp, role: string): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, field] of Object.entries(resource.fields)) {
    if (!isWritable(field, op, role)) continue;
    properties[name] = fieldSchema(field);
    if (field.required) required.push(name);
  }
  return { type: 'object', additionalProperties: false, properties, required };
}
