// The operations of every resource, derived from the model for each version: collections, objects, actions and nested collections.
import type { ErrorCode } from '../errors/catalog.js';
import type { CompiledModel, CompiledResource } from '../model/compile.js';
import { listSchema, objectSchema, OPERATION_ACCEPTED_SCHEMA, OPERATION_STATUS_SCHEMA } from '../model/output-schema.js';
import { actionInputSchema, bodySchema, type JsonSchema } from '../model/schema.js';
import { schemaInVersion } from '../model/version-schemas.js';
import { translatePathDown, type ApiVersion } from '../model/versions.js';
import { FILTER_OPERATORS, MAX_IN, MAX_SEARCH, paginationParameters } from '../query/list-parameters.js';
import type { Operation } from './operation.js';

/** Codes any authenticated operation can answer with, before it does anything of its own. */
const EVERY: ErrorCode[] = [
  'UNAUTHENTICATED',
  'INSUFFICIENT_SCOPE',
  'FORBIDDEN',
  'NOT_ACCEPTABLE',
  'URI_TOO_LONG',
  'INVALID_QUERY',
  'RATE_LIMITED',
  'HEADERS_TOO_LARGE',
  'REQUEST_TIMEOUT',
  'BAD_REQUEST',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
];
/** And those of any operation that reads a body. */
const WITH_BODY: ErrorCode[] = ['CSRF_TOKEN_INVALID', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'INVALID_JSON', 'VALIDATION_ERROR', 'EXPECTATION_FAILED'];
const IDEMPOTENT: ErrorCode[] = ['IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED'];

const ID_PATH: JsonSchema = { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } };
const IDEMPOTENCY_HEADERS: JsonSchema = { type: 'object', properties: { 'idempotency-key': { type: 'string', minLength: 1, maxLength: 255 } } };
const CONDITIONAL_READ: JsonSchema = { type: 'object', properties: { 'if-none-match': { type: 'string' }, 'if-modified-since': { type: 'string' } } };
/** A page carries a weak ETag (no Last-Modified): If-None-Match answers 304 when nothing in it changed. */
const CONDITIONAL_LIST: JsonSchema = { type: 'object', properties: { 'if-none-match': { type: 'string' } } };
const CONDITIONAL_WRITE: JsonSchema = { type: 'object', properties: { 'if-match': { type: 'string' }, 'if-unmodified-since': { type: 'string' } } };

/**
 * Body schemas by content type, in `version`'s shape: JSON and HTML forms everywhere, merge patches on PATCH. The
 * admin's (widest) fields; other roles get a subset.
 */
function bodies(version: ApiVersion, r: CompiledResource, op: 'create' | 'replace', patch = false): Record<string, JsonSchema> {
  const newest = bodySchema(r, op, 'admin');
  const loose = schemaInVersion(version, r.name, patch ? { ...newest, required: [] } : newest, 'body');
  return patch
    ? { 'application/merge-patch+json': loose, 'application/json': loose, 'application/x-www-form-urlencoded': loose }
    : { 'application/json': loose, 'application/x-www-form-urlencoded': loose };
}

/** A nested create's bodies: the path names the parent, so the body need not repeat it (src/http/routes/resource-routes.ts checkBody). */
function parentOptional(byType: Record<string, JsonSchema>, field: string): Record<string, JsonSchema> {
  return Object.fromEntries(
    Object.entries(byType).map(([type, schema]) => [type, { ...schema, required: ((schema.required ?? []) as string[]).filter((name) => name !== field) }]),
  );
}

/** One object as `version` shows it. */
export function objectInVersion(version: ApiVersion, r: CompiledResource): JsonSchema {
  return schemaInVersion(version, r.name, objectSchema(r), 'view');
}

/**
 * The query a collection takes in `version` (its field names): every pagination parameter (src/query/list-parameters.ts),
 * `sort`, `fields`, `q` where searchable, and each filter with each operator.
 */
export function listQuerySchema(r: CompiledResource, version: ApiVersion): JsonSchema {
  const named = (path: string): string => translatePathDown(version, r.name, path);
  const properties: Record<string, JsonSchema> = {};
  for (const p of paginationParameters()) properties[p.name] = { ...p.schema, description: p.description };
  properties.sort = {
    type: 'string',
    description: `Comma-separated; '-' for descending; ties broken by id. Sortable: ${[...r.paths.values()]
      .filter((p) => p.sortable)
      .map((p) => named(p.path))
      .join(', ')}.`,
  };
  properties.fields = { type: 'string', description: 'Comma-separated fields to return: only these (and `links`); without it, every field.' };
  if (r.searchable.length > 0) properties.q = { type: 'string', minLength: 1, maxLength: MAX_SEARCH, description: 'Free text over the searchable fields, ranked.' };
  for (const p of r.paths.values()) {
    if (!p.filterable) continue;
    const name = named(p.path);
    const value: JsonSchema =
      p.type === 'integer'
        ? { type: 'integer' }
        : p.type === 'boolean'
          ? { type: 'boolean' }
          : p.values
            ? { type: 'string', enum: [...p.values] }
            : p.type === 'timestamp'
              ? { type: 'string', format: 'date-time' }
              : { type: 'string' };
    properties[name] = value;
    for (const op of FILTER_OPERATORS) {
      properties[`${name}[${op}]`] = op === 'in' ? { type: 'string', description: `Comma-separated values, at most ${MAX_IN}.` } : value;
    }
  }
  return { type: 'object', additionalProperties: false, properties };
}

function label(r: CompiledResource): string {
  return r.singular.replace(/_/g, ' ');
}

/** Every operation of every routed resource in `version`, in registration order. */
export function resourceOperations(model: CompiledModel, version: ApiVersion): Operation[] {
  const out: Operation[] = [];
  const v = version.name;
  for (const r of model.resources.values()) {
    if (r.def.internal) continue;
    const base = `/${v}/${r.name}`;
    const item = `${base}/:id`;
    const read = { scopes: [`${r.name}:read`, `${r.name}:write`, '*'], grants: [...r.def.permissions.read] };
    const write = (grants: string[]): Pick<Operation, 'scopes' | 'grants'> => ({ scopes: [`${r.name}:write`, '*'], grants: [...grants] });
    const common = { version: v, resource: r.name, authentication: 'required' as const };
    out.push(
      {
        ...common,
        ...read,
        id: `${v}.${r.name}.list`,
        method: 'GET',
        path: base,
        kind: 'list',
        input: { query: listQuerySchema(r, version), headers: CONDITIONAL_LIST },
        output: { 200: listSchema(r, objectInVersion(version, r)), 304: null },
        errors: [...EVERY],
        csrf: false,
        idempotent: false,
        description: `Lists ${r.name} the caller may see, a page at a time.${r.def.description ? ` ${r.def.description}` : ''}`,
      },
      {
        ...common,
        ...write(r.def.permissions.create),
        id: `${v}.${r.name}.create`,
        method: 'POST',
        path: base,
        kind: 'create',
        input: { headers: IDEMPOTENCY_HEADERS, body: bodies(version, r, 'create') },
        output: { 201: objectInVersion(version, r) },
        errors: [...EVERY, ...WITH_BODY, ...IDEMPOTENT, 'CONFLICT', 'INVALID_STATE'],
        csrf: true,
        idempotent: true,
        description: `Creates a ${label(r)}.`,
      },
      {
        ...common,
        ...read,
        id: `${v}.${r.name}.read`,
        method: 'GET',
        path: item,
        kind: 'read',
        input: { path: ID_PATH, headers: CONDITIONAL_READ },
        output: { 200: objectInVersion(version, r), 304: null },
        errors: [...EVERY, 'NOT_FOUND'],
        csrf: false,
        idempotent: false,
        description: `Reads one ${label(r)}.`,
      },
      {
        ...common,
        ...write(r.def.permissions.update),
        id: `${v}.${r.name}.replace`,
        method: 'PUT',
        path: item,
        kind: 'replace',
        input: { path: ID_PATH, headers: CONDITIONAL_WRITE, body: bodies(version, r, 'replace') },
        output: { 200: objectInVersion(version, r) },
        errors: [...EVERY, ...WITH_BODY, 'NOT_FOUND', 'CONFLICT', 'INVALID_STATE', 'PRECONDITION_FAILED'],
        csrf: true,
        idempotent: false,
        description: `Replaces a ${label(r)} whole (omitted optional fields become null).`,
      },
      {
        ...common,
        ...write(r.def.permissions.update),
        id: `${v}.${r.name}.update`,
        method: 'PATCH',
        path: item,
        kind: 'update',
        input: { path: ID_PATH, headers: CONDITIONAL_WRITE, body: bodies(version, r, 'replace', true) },
        output: { 200: objectInVersion(version, r) },
        errors: [...EVERY, ...WITH_BODY, 'NOT_FOUND', 'CONFLICT', 'INVALID_STATE', 'PRECONDITION_FAILED'],
        csrf: true,
        idempotent: false,
        description: `Changes some fields of a ${label(r)} (RFC 7396 merge patch).`,
      },
      {
        ...common,
        ...write(r.def.permissions.delete),
        id: `${v}.${r.name}.delete`,
        method: 'DELETE',
        path: item,
        kind: 'delete',
        input: { path: ID_PATH, headers: CONDITIONAL_WRITE },
        output: { 204: null },
        errors: [...EVERY, 'CSRF_TOKEN_INVALID', 'NOT_FOUND', 'CONFLICT', 'INVALID_STATE', 'PRECONDITION_FAILED'],
        csrf: true,
        idempotent: false,
        description: `Deletes a ${label(r)}.`,
      },
    );
    // The state rule (src/model/state-rule.ts): a POST action waits for no operation in flight, it is refused.
    const held = r.holdable ? ', or while an operation of it is in flight' : '';
    for (const [name, action] of Object.entries(r.def.actions ?? {})) {
      const path = `${item}/${name}`;
      if (action.method === 'POST') {
        // Every POST action reads a body: its input, or `{}` (anything else is 422).
        const input = actionInputSchema(action.input);
        const asynchronous = action.perform !== undefined;
        out.push({
          ...common,
          ...write(action.allow),
          id: `${v}.${r.name}.${name}`,
          method: 'POST',
          path,
          kind: 'action',
          action: name,
          input: { path: ID_PATH, headers: IDEMPOTENCY_HEADERS, body: { 'application/json': input, 'application/x-www-form-urlencoded': input } },
          output: asynchronous ? { 202: OPERATION_ACCEPTED_SCHEMA } : { [action.status ?? 200]: objectInVersion(version, r) },
          errors: [...EVERY, ...WITH_BODY, ...IDEMPOTENT, 'NOT_FOUND', 'INVALID_STATE'],
          csrf: true,
          idempotent: true,
          description:
            action.description ??
            (asynchronous
              ? `Starts the ${name} of a ${label(r)}: 202, and the outcome at the Location; 409 outside the states it exists in${held}.`
              : `Runs the ${name} action on a ${label(r)}; 409 outside the states it exists in${held}.`),
        });
        if (asynchronous) {
          // The Location of the 202: where the outcome of the newest request of the action is read.
          out.push({
            ...common,
            ...read,
            grants: [...action.allow],
            id: `${v}.${r.name}.${name}.status`,
            method: 'GET',
            path,
            kind: 'operation',
            action: name,
            input: { path: ID_PATH },
            output: { 200: OPERATION_STATUS_SCHEMA },
            errors: [...EVERY, 'NOT_FOUND'],
            csrf: false,
            idempotent: false,
            description: `The state of the newest ${name} of a ${label(r)}: processing, succeeded or failed; 404 before the first.`,
          });
        }
      } else {
        const view: JsonSchema = { type: 'object', required: ['links'], properties: { links: { type: 'array' } } };
        out.push({
          ...common,
          ...read,
          grants: [...action.allow],
          id: `${v}.${r.name}.${name}`,
          method: 'GET',
          path,
          kind: 'view',
          action: name,
          input: { path: ID_PATH },
          output: { 200: view },
          errors: [...EVERY, 'NOT_FOUND'],
          csrf: false,
          idempotent: false,
          description: action.description ?? `The ${name} of a ${label(r)}; 404 outside the states it exists in.`,
        });
      }
    }
    for (const child of r.children) {
      const c = model.resources.get(child.resource)!;
      const path = `${item}/${child.resource}`;
      const parent = { resource: r.name, field: child.field };
      const childCommon = { version: v, resource: c.name, parent, authentication: 'required' as const };
      out.push(
        {
          ...childCommon,
          scopes: [`${c.name}:read`, `${c.name}:write`, '*'],
          grants: [...c.def.permissions.read],
          id: `${v}.${r.name}.${c.name}.list`,
          method: 'GET',
          path,
          kind: 'list',
          input: { path: ID_PATH, query: listQuerySchema(c, version), headers: CONDITIONAL_LIST },
          output: { 200: listSchema(c, objectInVersion(version, c)), 304: null },
          errors: [...EVERY, 'NOT_FOUND'],
          csrf: false,
          idempotent: false,
          description: `Lists the ${c.name} of one ${label(r)}.`,
        },
        {
          ...childCommon,
          scopes: [`${c.name}:write`, '*'],
          grants: [...c.def.permissions.create],
          id: `${v}.${r.name}.${c.name}.create`,
          method: 'POST',
          path,
          kind: 'create',
          input: { path: ID_PATH, headers: IDEMPOTENCY_HEADERS, body: parentOptional(bodies(version, c, 'create'), translatePathDown(version, c.name, child.field)) },
          output: { 201: objectInVersion(version, c) },
          errors: [...EVERY, ...WITH_BODY, ...IDEMPOTENT, 'NOT_FOUND', 'CONFLICT', 'INVALID_STATE'],
          csrf: true,
          idempotent: true,
          description: `Creates a ${label(c)} under one ${label(r)}.`,
        },
      );
    }
  }
  // A method nobody is granted is not served at all (405 with Allow), rather than served to refuse everyone:
  // webhook deliveries are written by workers only.
  return out.filter((op) => op.grants.length > 0);
}
