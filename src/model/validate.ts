// Body validation with Ajv from the generated schemas; failures become one VALIDATION_ERROR detail per field.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AppError, type ErrorDetail } from '../errors/app-error.js';
import type { CompiledResource } from './compile.js';
import { parseTimestamp } from './timestamps.js';
import { ILL_FORMED_MESSAGE, illFormedPaths } from './well-formed-text.js';
import { bodySchema, isNullable, type WriteOp } from './schema.js';
import { schemaInVersion } from './version-schemas.js';
import type { ApiVersion } from './versions.js';

// ajv-formats ships CommonJS; under NodeNext its function arrives as the module's `default` property.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv, formats: string[]) => Ajv;

export type BodyFormat = 'json' | 'form';

function makeAjv(coerce: boolean): Ajv {
  // Form bodies carry only strings, so they are coerced to the schema's types; JSON bodies never are.
  const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: coerce, strict: true, allowUnionTypes: true });
  addFormats(ajv, ['email', 'uuid']);
  // Ours, not ajv-formats': the same strict RFC 3339 and the same range as filters (a year 0000 or 10000 would pass there).
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => parseTimestamp(s).ok });
  return ajv;
}

const ajvJson = makeAjv(false);
const ajvForm = makeAjv(true);
interface Compiled {
  validate: ValidateFunction;
  writable: string[];
}
/**
 * Compiled validators by compiled resource (not by name: two apps in one process may each have a
 * `notes` resource with different fields), then by operation, role and body format.
 */
const cache = new WeakMap<CompiledResource, Map<string, Compiled>>();
/**
 * And the validators themselves by body format and schema text: a process that compiles a model again (several
 * runtimes in one process: tests, embedding) reuses what an equal schema compiled to instead of compiling it
 * again (about 0.2 s of CPU per runtime of the reference app). A validator depends on nothing but its schema
 * and the fixed options of its Ajv, so equal text is an equal validator.
 */
const byText = { json: new Map<string, ValidateFunction>(), form: new Map<string, ValidateFunction>() };

function compileOnce(schema: Record<string, unknown>, format: BodyFormat): ValidateFunction {
  const text = JSON.stringify(schema);
  let validate = byText[format].get(text);
  if (!validate) byText[format].set(text, (validate = (format === 'form' ? ajvForm : ajvJson).compile(schema)));
  return validate;
}

function validatorFor(resource: CompiledResource, op: WriteOp, role: string, format: BodyFormat): Compiled {
  let byKey = cache.get(resource);
  if (!byKey) {
    byKey = new Map();
    cache.set(resource, byKey);
  }
  const key = `${op}|${role}|${format}`;
  let entry = byKey.get(key);
  if (!entry) {
    const schema = bodySchema(resource, op, role);
    entry = {
      validate: compileOnce(schema, format),
      writable: Object.keys(schema.properties as Record<string, unknown>),
    };
    byKey.set(key, entry);
  }
  return entry;
}

/** The fields a caller with `role` may send for `op`. */
export function writableFields(resource: CompiledResource, op: WriteOp, role: string): string[] {
  return validatorFor(resource, op, role, 'json').writable;
}

function fieldName(path: string): string {
  return path.replace(/^\//, '').replace(/\//g, '.');
}

function reasonForExtra(resource: CompiledResource, name: string, op: WriteOp): string {
  const field = resource.fields[name];
  if (['id', 'version', 'created_at', 'updated_at', 'links'].includes(name)) return 'is read-only';
  if (!field || field.hidden) return 'is not a field of this resource';
  if (op === 'replace' && field.createOnly) return 'cannot be changed after creation';
  return 'is read-only';
}

function toDetails(extraReason: (name: string) => string, errors: ErrorObject[], body: unknown): ErrorDetail[] {
  const seen = new Set<string>();
  const details: ErrorDetail[] = [];
  for (const e of errors) {
    let field: string;
    let message: string;
    let value: unknown;
    if (e.keyword === 'required') {
      const prefix = fieldName(e.instancePath);
      field = (prefix ? `${prefix}.` : '') + String(e.params.missingProperty);
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      const prefix = fieldName(e.instancePath);
      const extra = String(e.params.additionalProperty);
      field = (prefix ? `${prefix}.` : '') + extra;
      message = prefix ? 'is not allowed here' : extraReason(extra);
    } else {
      field = fieldName(e.instancePath) || '(body)';
      message = e.message ?? 'is invalid';
      value = e.data;
    }
    if (seen.has(field)) continue;
    seen.add(field);
    details.push(value === undefined ? { field, message } : { field, message, value });
  }
  if (details.length === 0 && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    details.push({ field: '(body)', message: 'must be a JSON object' });
  }
  return details;
}

/** One detail per string (or key) of `body` that is not well-formed text, unless its field already has one. */
function addIllFormedText(details: ErrorDetail[], body: unknown): void {
  const named = new Set(details.map((d) => d.field));
  for (const field of illFormedPaths(body)) if (!named.has(field)) details.push({ field, message: ILL_FORMED_MESSAGE });
}

/**
 * Validates `body` for `op` as a caller with `role`; returns a new object holding every writable
 * field, with defaults applied and omitted optional fields set to null (PUT semantics).
 */
export function validateBody(resource: CompiledResource, op: WriteOp, role: string, body: unknown, format: BodyFormat = 'json'): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('VALIDATION_ERROR', 'The request body must be a JSON object.', { details: [{ field: '(body)', message: 'must be a JSON object' }] });
  }
  const copy: Record<string, unknown> = structuredClone(body) as Record<string, unknown>;
  const { validate, writable } = validatorFor(resource, op, role, format);
  const details = validate(copy) ? [] : toDetails((name) => reasonForExtra(resource, name, op), validate.errors ?? [], body);
  addIllFormedText(details, body);
  if (details.length > 0) throw new AppError('VALIDATION_ERROR', `The ${resource.singular.replace(/_/g, ' ')} is invalid.`, { details });
  for (const name of writable) {
    const field = resource.fields[name]!;
    if (copy[name] === undefined && isNullable(field)) copy[name] = null;
    if (copy[name] !== null && copy[name] !== undefined) copy[name] = normalize(field.type, copy[name]);
  }
  return copy;
}

/** Canonical stored forms: emails lowercased, timestamps as ISO 8601 UTC with milliseconds. */
function normalize(type: string, value: unknown): unknown {
  if (type === 'email' && typeof value === 'string') return value.toLowerCase();
  if (type === 'timestamp' && typeof value === 'string') {
    const parsed = parseTimestamp(value);
    return parsed.ok ? parsed.iso : value;
  }
  return value;
}

/** Validators of older versions' body shapes, by compiled resource, then version, operation, role and format. */
const versionCache = new WeakMap<CompiledResource, Map<string, ValidateFunction>>();

/**
 * Checks a body as an older `version` takes it, before it is translated up to the newest shape (DESIGN §10): a
 * v1 client sending a v2 field (`price`) is 422 naming it, as v2 refuses `price_cents`. Values are checked here
 * and again, in the newest shape, by validateBody; nothing is kept from this pass (defaults, coercion).
 */
export function checkBodyInVersion(resource: CompiledResource, version: ApiVersion, op: WriteOp | 'patch', role: string, body: unknown, format: BodyFormat = 'json'): void {
  if (!version.newer || typeof body !== 'object' || body === null || Array.isArray(body)) return;
  let byKey = versionCache.get(resource);
  if (!byKey) versionCache.set(resource, (byKey = new Map()));
  const key = `${version.name}|${op}|${role}|${format}`;
  let validate = byKey.get(key);
  if (!validate) {
    const newest = bodySchema(resource, op === 'patch' ? 'replace' : op, role);
    const schema = schemaInVersion(version, resource.name, op === 'patch' ? { ...newest, required: [] } : newest, 'body');
    // A merge patch may null any optional field; the newest-shape pass decides what null means for each.
    validate = compileOnce(op === 'patch' ? nullablePatch(schema) : schema, format);
    byKey.set(key, validate);
  }
  if (validate(structuredClone(body))) return;
  const details = toDetails(() => `is not a field of ${resource.name} in ${version.name}`, validate.errors ?? [], body);
  throw new AppError('VALIDATION_ERROR', `The ${resource.singular.replace(/_/g, ' ')} is invalid.`, { details, facts: { fieldsInVersion: true } });
}

/** A merge patch's top level: each property may also be null (RFC 7396: remove the member). */
function nullablePatch(schema: Record<string, unknown>): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>)) props[name] = { anyOf: [prop, { type: 'null' }] };
  return { ...schema, properties: props };
}

const shapes = { json: new WeakMap<object, ValidateFunction>(), form: new WeakMap<object, ValidateFunction>() };

/**
 * Validates a body that is not a resource (a login, a password change) against a JSON Schema,
 * with the same VALIDATION_ERROR details; the schema object is compiled once.
 */
export function validateShape<T>(schema: Record<string, unknown>, body: unknown, format: BodyFormat, what: string, checkText = true): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('VALIDATION_ERROR', `The ${what} must be a JSON object.`, { details: [{ field: '(body)', message: 'must be a JSON object' }] });
  }
  let validate = shapes[format].get(schema);
  if (!validate) {
    validate = (format === 'form' ? ajvForm : ajvJson).compile(schema);
    shapes[format].set(schema, validate);
  }
  const copy = structuredClone(body) as T;
  const details = validate(copy) ? [] : toDetails(() => 'is not a field of this request', validate.errors ?? [], body);
  if (checkText) addIllFormedText(details, body);
  if (details.length > 0) throw new AppError('VALIDATION_ERROR', `The ${what} is invalid.`, { details });
  return copy;
}
