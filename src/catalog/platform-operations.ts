// The operations outside the resource model: cookie sessions, the password change, OAuth (token, metadata, keys) and health.
import type { ErrorCode } from '../errors/catalog.js';
import type { CompiledModel } from '../model/compile.js';
import type { JsonSchema } from '../model/schema.js';
import type { Operation } from './operation.js';
import { PLATFORM_SCHEMAS } from '../platform/request-schemas.js';
import { METRICS_READ } from '../platform/platform-scopes.js';

/** Where migration guides are served (DESIGN §10: a deprecated version's Link points here). */
export const MIGRATION_GUIDE_PATH = '/docs/migrations/:guide';

const { LOGIN, PASSWORD_CHANGE } = PLATFORM_SCHEMAS;

export const TRANSPORT: ErrorCode[] = ['NOT_ACCEPTABLE', 'URI_TOO_LONG', 'HEADERS_TOO_LARGE', 'REQUEST_TIMEOUT', 'BAD_REQUEST', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];
const BODY: ErrorCode[] = ['UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'INVALID_JSON', 'VALIDATION_ERROR', 'EXPECTATION_FAILED'];

const SESSION: JsonSchema = {
  type: 'object',
  required: ['user', 'csrf_token', 'expires_at', 'created_at', 'last_accessed'],
  properties: {
    user: { type: 'object' },
    csrf_token: { type: 'string' },
    expires_at: { type: 'string', format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    last_accessed: { type: 'string', format: 'date-time' },
  },
};

const TOKEN_REQUEST: JsonSchema = {
  type: 'object',
  required: ['grant_type'],
  properties: { grant_type: { const: 'client_credentials' }, scope: { type: 'string' }, client_id: { type: 'string' }, client_secret: { type: 'string' } },
};

/** RFC 6749 §5.2: the token endpoint's own error body (400 for a bad request, grant or scope; 401 when the client fails to authenticate). */
const OAUTH_ERROR: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string', enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope'] },
    error_description: { type: 'string' },
  },
};

const TOKEN: JsonSchema = {
  type: 'object',
  required: ['access_token', 'token_type', 'expires_in'],
  properties: { access_token: { type: 'string' }, token_type: { const: 'Bearer' }, expires_in: { type: 'integer' }, scope: { type: 'string' } },
};

const EVENT: JsonSchema = {
  type: 'object',
  required: ['id', 'type', 'sequence', 'created_at', 'api_version', 'data'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    type: { type: 'string' },
    sequence: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
    api_version: { type: 'string' },
    data: { type: 'object', required: ['object'], properties: { object: { type: 'object' } } },
    previous_attributes: { type: 'object' },
  },
};

const EVENT_LIST: JsonSchema = {
  type: 'object',
  required: ['data', 'pagination', 'links'],
  properties: {
    data: { type: 'array', items: EVENT },
    pagination: { type: 'object', required: ['next_cursor', 'has_more'], properties: { next_cursor: { type: ['string', 'null'] }, has_more: { type: 'boolean' } } },
    links: { type: 'array' },
  },
};

/** Every platform operation, with the paths the model decides (the users resource) and the current version. */
export function platformOperations(model: CompiledModel, version: string): Operation[] {
  const none = { authentication: 'none' as const, grants: [], scopes: [], csrf: false, idempotent: false };
  const users = model.users;
  return [
    {
      ...none,
      id: `${version}.sessions.create`,
      method: 'POST',
      path: `/${version}/sessions`,
      kind: 'platform',
      input: { body: { 'application/json': LOGIN, 'application/x-www-form-urlencoded': LOGIN } },
      output: { 201: SESSION },
      errors: [...TRANSPORT, ...BODY, 'UNAUTHENTICATED', 'CROSS_SITE_REQUEST', 'RATE_LIMITED'],
      description: 'Logs in with an email and a password: a session cookie (and a device cookie) for this browser.',
    },
    {
      ...none,
      authentication: 'required',
      grants: ['authenticated'],
      id: `${version}.sessions.current.read`,
      method: 'GET',
      path: `/${version}/sessions/current`,
      kind: 'platform',
      input: {},
      output: { 200: SESSION },
      errors: [...TRANSPORT, 'UNAUTHENTICATED', 'NOT_FOUND', 'RATE_LIMITED'],
      description: 'The session the request is authenticated by, with its CSRF token.',
    },
    {
      ...none,
      authentication: 'required',
      grants: ['authenticated'],
      csrf: true,
      id: `${version}.sessions.current.delete`,
      method: 'DELETE',
      path: `/${version}/sessions/current`,
      kind: 'platform',
      input: {},
      output: { 204: null },
      errors: [...TRANSPORT, 'UNAUTHENTICATED', 'CSRF_TOKEN_INVALID', 'NOT_FOUND', 'RATE_LIMITED'],
      description: 'Logs out: ends the current session and clears its cookies.',
    },
    {
      ...none,
      authentication: 'required',
      grants: ['admin', 'owner'],
      scopes: [`${users}:write`, '*'],
      csrf: true,
      id: `${version}.${users}.password.replace`,
      method: 'PUT',
      path: `/${version}/${users}/:id/password`,
      kind: 'platform',
      input: {
        path: { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } },
        body: { 'application/json': PASSWORD_CHANGE, 'application/x-www-form-urlencoded': PASSWORD_CHANGE },
      },
      output: { 204: null },
      errors: [...TRANSPORT, ...BODY, 'UNAUTHENTICATED', 'INSUFFICIENT_SCOPE', 'FORBIDDEN', 'CSRF_TOKEN_INVALID', 'NOT_FOUND', 'RATE_LIMITED'],
      description: 'Changes a password (users give their current one) and ends every session of the user.',
    },
    {
      ...none,
      authentication: 'client',
      id: 'oauth.token',
      method: 'POST',
      path: '/oauth/token',
      kind: 'platform',
      input: { body: { 'application/x-www-form-urlencoded': TOKEN_REQUEST } },
      output: { 200: TOKEN, 400: OAUTH_ERROR, 401: OAUTH_ERROR },
      // RFC 6749 §5.2: the endpoint answers its errors in OAuth's body, not the Canon one; these are the transport failures before it.
      errors: ['UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'URI_TOO_LONG', 'NOT_ACCEPTABLE'],
      description: 'OAuth 2.0 client credentials grant (RFC 6749 §4.4): a bearer token for the client.',
    },
    {
      ...none,
      id: 'oauth.metadata',
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      kind: 'platform',
      input: {},
      output: {
        200: {
          type: 'object',
          required: ['issuer', 'token_endpoint', 'jwks_uri'],
          properties: { issuer: { type: 'string' }, token_endpoint: { type: 'string' }, jwks_uri: { type: 'string' } },
        },
      },
      errors: [...TRANSPORT],
      description: 'Authorization server metadata (RFC 8414).',
    },
    {
      ...none,
      id: 'oauth.jwks',
      method: 'GET',
      path: '/.well-known/jwks.json',
      kind: 'platform',
      input: {},
      output: { 200: { type: 'object', required: ['keys'], properties: { keys: { type: 'array' } } } },
      errors: [...TRANSPORT],
      description: 'The public keys that verify bearer tokens (RFC 7517).',
    },
    {
      ...none,
      authentication: 'required',
      grants: ['authenticated'],
      id: 'events.list',
      method: 'GET',
      path: '/events',
      kind: 'platform',
      input: {
        query: {
          type: 'object',
          additionalProperties: false,
          properties: {
            after: { type: 'string', description: 'An event id: the events after it (400 INVALID_PARAMETER when no kept event has it).' },
            cursor: { type: 'string' },
            limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
            type: { type: 'string', description: 'Event types, comma-separated, `*` matching any characters (`order.*`).' },
          },
        },
      },
      output: { 200: EVENT_LIST },
      produces: ['application/json', 'text/event-stream'],
      errors: [...TRANSPORT, 'UNAUTHENTICATED', 'INSUFFICIENT_SCOPE', 'INVALID_QUERY', 'INVALID_PARAMETER', 'RATE_LIMITED'],
      description:
        'The events the caller may see, oldest first (cursor pagination); with `Accept: text/event-stream` a Server-Sent Events stream that resumes after `Last-Event-ID` or `after`. What a stream carries follows the caller as it is at each event (role, scopes, revocation); a caller whose scopes read no resource is 403.',
    },
    {
      ...none,
      authentication: 'required',
      grants: ['admin'],
      scopes: [METRICS_READ],
      id: 'metrics',
      method: 'GET',
      path: '/metrics',
      kind: 'platform',
      input: {},
      output: { 200: { type: 'string', description: 'Prometheus text exposition format 0.0.4.' } },
      produces: ['text/plain'],
      errors: [...TRANSPORT, 'UNAUTHENTICATED', 'INSUFFICIENT_SCOPE', 'FORBIDDEN', 'RATE_LIMITED'],
      description:
        'Prometheus metrics of this process: requests per API version, webhook deliveries by result and their latency, the delivery queue, event streams, events written. For admins and credentials with the `metrics:read` scope; no label names a principal.',
    },
    {
      ...none,
      id: 'docs.migration',
      method: 'GET',
      path: MIGRATION_GUIDE_PATH,
      kind: 'platform',
      input: { path: { type: 'object', required: ['guide'], properties: { guide: { type: 'string', pattern: '^v[0-9]+-to-v[0-9]+$' } } } },
      output: { 200: { type: 'string', description: 'The guide, as Markdown (text/markdown).' } },
      produces: ['text/markdown'],
      // Documentation paths answer whatever Accept asks (src/http/transport/app.ts DOCUMENTATION_PATHS).
      errors: [...TRANSPORT.filter((c) => c !== 'NOT_ACCEPTABLE'), 'ROUTE_NOT_FOUND', 'RATE_LIMITED'],
      description: 'A migration guide between two versions (`v1-to-v2`): what a deprecated version’s `Link: <…>; rel="deprecation"` points at.',
    },
    {
      ...none,
      id: 'health.live',
      method: 'GET',
      path: '/healthz',
      kind: 'platform',
      input: {},
      output: { 200: { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } } },
      errors: [...TRANSPORT],
      description: 'Liveness: the process answers.',
    },
    {
      ...none,
      id: 'health.ready',
      method: 'GET',
      path: '/readyz',
      kind: 'platform',
      input: {},
      output: { 200: { type: 'object', required: ['status', 'checks'], properties: { status: { type: 'string' }, checks: { type: 'object' } } } },
      errors: [...TRANSPORT],
      description: 'Readiness: the store answers (503 otherwise); Redis being down only degrades it.',
    },
  ];
}

/** Each version's OpenAPI document (DESIGN §7): public, served at the version's own path. */
export function documentOperations(versions: readonly string[]): Operation[] {
  return versions.map((version) => ({
    authentication: 'none' as const,
    grants: [],
    scopes: [],
    csrf: false,
    idempotent: false,
    id: `${version}.openapi`,
    method: 'GET' as const,
    path: `/${version}/openapi.json`,
    kind: 'platform' as const,
    input: { headers: { type: 'object', properties: { 'if-none-match': { type: 'string' } } } },
    output: {
      200: {
        type: 'object',
        required: ['openapi', 'info', 'paths'],
        properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' } },
        description: 'An OpenAPI 3.1 document.',
      },
      304: null,
    },
    errors: [...TRANSPORT, 'RATE_LIMITED'],
    summary: `The OpenAPI document of ${version}`,
    description: `This API's ${version} as an OpenAPI 3.1 document: every operation, schema, header, error and security scheme, and the event types as webhooks. Public; a strong ETag.`,
  }));
}
