// One catalog operation as an OpenAPI 3.1 operation object (§4.8.10): parameters, request body, every response with its headers and error codes, security.
import type { Operation } from '../catalog/operation.js';
import { responseHeaders } from '../catalog/response-headers.js';
import { securityOf } from '../catalog/security-schemes.js';
import { ERROR_CATALOG, type ErrorCode } from '../errors/catalog.js';
import type { JsonSchema } from '../model/schema.js';
import { DEFAULT_LIMIT, MAX_LIMIT, PAGINATION_STYLES } from '../query/list-parameters.js';

type Obj = Record<string, unknown>;

/** How the document names things it shares: the error body, and how a request names its version when not in the path. */
export interface OperationContext {
  deprecated: boolean;
  /** A parameter every versioned operation takes under the header, query and date strategies. */
  versionParameter?: Obj;
  /** Under the media-type strategy: the vendor type JSON bodies are served as besides application/json. */
  vendorType?: string;
}

/** How a collection pages (DESIGN §6): each style, the parameters that choose it, what the response carries. */
const PAGINATION = {
  default: 'cursor',
  styles: Object.fromEntries(
    Object.entries(PAGINATION_STYLES).map(([style, s]) => [style, { parameters: s.params.map((p) => p.name), response: s.envelope, description: s.description }]),
  ),
  maxLimit: MAX_LIMIT,
  defaultLimit: DEFAULT_LIMIT,
};

const REASONS: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted: the outcome is read at the Location',
  204: 'No Content',
  304: 'Not Modified',
};

/** `/v2/products/:id` → `/v2/products/{id}` (OpenAPI path templating, §4.8.8.2). */
export function templatePath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function parameters(op: Operation, ctx: OperationContext): Obj[] {
  const out: Obj[] = [];
  const add = (where: 'path' | 'query' | 'header', schema: JsonSchema | undefined): void => {
    if (!schema) return;
    const required = new Set((schema.required ?? []) as string[]);
    for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
      const { description, ...rest } = prop;
      out.push({
        name: where === 'header' ? headerName(name) : name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(typeof description === 'string' ? { description } : {}),
        schema: rest,
      });
    }
  };
  add('path', op.input.path);
  add('query', op.input.query);
  add('header', op.input.headers);
  if (op.csrf) {
    out.push({
      name: 'X-CSRF-Token',
      in: 'header',
      required: false,
      description: 'The session’s CSRF token: required when the request is authenticated by the session cookie.',
      schema: { type: 'string' },
    });
  }
  if (ctx.versionParameter && op.version) out.push(ctx.versionParameter);
  return out;
}

/** `if-none-match` → `If-None-Match`. */
function headerName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

/** The key of a header in `components.headers`: its name, and `-optional` when it is not always present. */
export function headerKey(name: string, required: boolean): string {
  return required ? name : `${name}-optional`;
}

function headersOf(op: Operation, status: number, ctx: OperationContext): Obj {
  const out: Obj = {};
  // Only the version's own operations are deprecated with it: the platform's (health, metrics, events, OAuth) are
  // unversioned and never carry Deprecation or Sunset, whichever document lists them.
  for (const h of responseHeaders(op, status, ctx.deprecated && op.version !== undefined)) out[h.name] = { $ref: `#/components/headers/${headerKey(h.name, h.required)}` };
  return out;
}

function successContent(op: Operation, schema: JsonSchema, ctx: OperationContext): Obj {
  const types = op.produces ?? ['application/json'];
  const content: Obj = {};
  for (const type of types) {
    if (type === 'text/event-stream') {
      content[type] = {
        schema: {
          type: 'string',
          description: op.streamDescription ?? 'Server-Sent Events: `id`, `event` (the type) and `data` (the event as JSON) per event; resumes after `Last-Event-ID`.',
        },
      };
    } else content[type] = { schema: op.successContent?.[type] ?? schema };
  }
  if (ctx.vendorType && types.includes('application/json')) content[ctx.vendorType] = { schema };
  return content;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  417: 'Expectation Failed',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * The operation object, and the `x-canon-*` extensions naming what the catalog adds (each error status's codes,
 * idempotency). `errorResponse` turns an error response into a reference to a shared one (`components.responses`).
 */
export function operationObject(op: Operation, ctx: OperationContext, errorRef: Obj, errorResponse: (response: Obj) => Obj): Obj {
  const responses: Obj = {};
  for (const [code, schema] of Object.entries(op.output)) {
    const status = Number(code);
    responses[code] = {
      description: REASONS[status] ?? STATUS_TEXT[status] ?? 'OK',
      headers: headersOf(op, status, ctx),
      ...(schema === null ? {} : { content: successContent(op, schema, ctx) }),
    };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of op.errors) {
    const status = ERROR_CATALOG[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const codes: Record<string, ErrorCode[]> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    codes[String(status)] = list;
    responses[String(status)] = errorResponse({
      description: `${STATUS_TEXT[status] ?? 'Error'}: one of this operation’s \`x-canon-error-codes\` for ${status}.`,
      headers: headersOf(op, status, ctx),
      content: { 'application/json': { schema: errorRef }, ...Object.fromEntries(Object.entries(op.errorContent ?? {}).map(([type, schema]) => [type, { schema }])) },
    });
  }
  const body = op.input.body;
  const summary = op.summary ?? firstSentence(op.description);
  return {
    operationId: op.id,
    summary,
    description: op.description,
    tags: [tagOf(op)],
    ...(op.version !== undefined && ctx.deprecated ? { deprecated: true } : {}),
    parameters: parameters(op, ctx),
    ...(body
      ? {
          requestBody: {
            // Actions take `{}` or no body at all.
            required: op.kind === 'create' || op.kind === 'replace' || op.kind === 'update',
            content: Object.fromEntries(Object.entries(body).map(([type, schema]) => [type, { schema: formWithToken(op, type, schema) }])),
          },
        }
      : {}),
    responses,
    security: securityOf(op),
    'x-canon-error-codes': codes,
    ...(op.idempotent ? { 'x-canon-idempotent': true } : {}),
    ...(op.kind === 'list' ? { 'x-canon-pagination': PAGINATION } : {}),
  };
}

/** An HTML form posting with a session cookie sends the CSRF token as a field (taken off the body before it is read). */
function formWithToken(op: Operation, type: string, schema: JsonSchema): JsonSchema {
  if (!op.csrf || type !== 'application/x-www-form-urlencoded' || schema.properties === undefined) return schema;
  const csrf = { type: 'string', description: 'The session’s CSRF token, when the request is authenticated by the session cookie (instead of X-CSRF-Token).' };
  return { ...schema, properties: { ...(schema.properties as object), csrf_token: csrf } };
}

function firstSentence(text: string): string {
  const end = text.search(/[.:;](\s|$)/);
  return (end > 0 ? text.slice(0, end) : text).slice(0, 120);
}

/** The tag grouping an operation: its resource (the parent's for nested collections), else its family. */
export function tagOf(op: Operation): string {
  if (op.parent) return op.parent.resource;
  if (op.resource) return op.resource;
  return op.id.split('.')[op.id.startsWith('v') && /^v[0-9]+\./.test(op.id) ? 1 : 0]!;
}
