// JSON Schemas of what clients receive, generated from the model beside the request-body schemas (src/model/schema.ts).
import type { CompiledResource } from './compile.js';
import { fieldSchema, type JsonSchema } from './schema.js';

/** A hypermedia link as every object and list carries them (src/http/rendering/render.ts). */
export const LINK_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['rel', 'href', 'method'],
  additionalProperties: false,
  properties: { rel: { type: 'string' }, href: { type: 'string' }, method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] } },
};

/** The DESIGN §5 error body, the same on every operation. */
export const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'timestamp', 'request_id'],
      additionalProperties: false,
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        details: {
          type: 'array',
          maxItems: 100,
          items: { type: 'object', required: ['field', 'message'], properties: { field: { type: 'string' }, message: { type: 'string' }, value: {} } },
        },
        details_omitted: { type: 'integer', minimum: 1 },
        timestamp: { type: 'string', format: 'date-time' },
        request_id: { type: 'string' },
      },
    },
  },
};

/** The 202 of an asynchronous action (DESIGN §3: the payment): accepted, its outcome at the Location. */
export const OPERATION_ACCEPTED_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['status'],
  additionalProperties: false,
  properties: { status: { type: 'string', enum: ['processing'] } },
};

/** GET on an asynchronous action's path: the state of its newest operation on the object. */
export const OPERATION_STATUS_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['status', 'created_at', 'updated_at', 'links'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['processing', 'succeeded', 'failed'] },
    error: { type: 'string', description: 'Why it failed; only when failed.' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    links: { type: 'array', items: LINK_SCHEMA },
  },
};

/** The system fields every object shows (its version is in its ETag, not its body). */
const SYSTEM_FIELDS: Record<string, JsonSchema> = {
  id: { type: 'string', format: 'uuid' },
  created_at: { type: 'string', format: 'date-time' },
  updated_at: { type: 'string', format: 'date-time' },
};

/** One object as rendered in the latest version: system fields, every rendered field, and `links`. */
export function objectSchema(resource: CompiledResource): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const name of resource.rendered) {
    const system = SYSTEM_FIELDS[name];
    if (system) {
      properties[name] = system;
      continue;
    }
    const field = resource.fields[name];
    if (!field) continue;
    // What was stored is what is shown: no defaults, and any field may be null unless it is required.
    const { default: _default, ...shown } = fieldSchema({ ...field, default: undefined });
    properties[name] = field.required ? shown : { ...shown, type: nullableType(shown.type) };
    if (field.description) properties[name] = { ...properties[name], description: field.description };
  }
  // Secrets shown once (a new key): only in the response that makes them, never stored in clear.
  for (const [name, r] of Object.entries(resource.def.revealed ?? {})) properties[name] = { type: 'string', readOnly: true, description: r.description };
  properties.links = { type: 'array', items: LINK_SCHEMA };
  // Every field is there unless the request named some with `fields=` (sparse fieldsets): only `links` always is.
  return {
    type: 'object',
    required: ['links'],
    additionalProperties: false,
    properties,
    ...(resource.def.description ? { description: resource.def.description } : {}),
    ...(resource.def.examples ? { examples: resource.def.examples } : {}),
  };
}

function nullableType(type: unknown): unknown {
  const types = Array.isArray(type) ? type : [type];
  return types.includes('null') ? types : [...types, 'null'];
}

/**
 * A page of a collection: `data`, then the envelope of the pagination style the query chose (DESIGN §6:
 * cursor and keyset `pagination`, offset and page totals, or `next_page_token`), and `links`.
 */
export function listSchema(resource: CompiledResource, item: JsonSchema = objectSchema(resource)): JsonSchema {
  return {
    type: 'object',
    required: ['data', 'links'],
    additionalProperties: false,
    properties: {
      data: { type: 'array', items: item },
      pagination: {
        type: 'object',
        properties: {
          next_cursor: { type: ['string', 'null'] },
          has_more: { type: 'boolean' },
          offset: { type: 'integer', minimum: 0 },
          limit: { type: 'integer', minimum: 1 },
          page: { type: 'integer', minimum: 1 },
          per_page: { type: 'integer', minimum: 1 },
          total: { type: 'integer', minimum: 0 },
        },
      },
      next_page_token: { type: 'string' },
      links: { type: 'array', items: LINK_SCHEMA },
    },
  };
}
