// The schema's names for the model's resources and fields (DESIGN §7): types in PascalCase singular, fields and queries in camelCase.
import { camelCase, pascalCase, snakeCase } from '../lib/names.js';
import type { CompiledResource } from '../model/compile.js';

/** `order-items` (singular `order_item`) → `OrderItem`. */
export function typeName(r: CompiledResource): string {
  return pascalCase(r.singular);
}

/** The query of one object: `orderItem(id:)`. */
export function singleField(r: CompiledResource): string {
  return camelCase(r.singular);
}

/** The query of a collection: `orderItems(first:, after:, filter:, sort:, q:)`. */
export function listField(r: CompiledResource): string {
  return camelCase(r.name);
}

/** A model field's name in the schema: `full_name` → `fullName`. */
export const fieldName = camelCase;

/** A schema field's name in the model: `fullName` → `full_name`. */
export const modelName = snakeCase;

/**
 * A dotted model path in schema names (`price.amount`, `unit_price.amount`, `tags.1`): each segment in camelCase, so
 * the details of an error name what the request named.
 */
export function schemaPath(path: string): string {
  return path
    .split('.')
    .map((segment) => camelCase(segment))
    .join('.');
}
