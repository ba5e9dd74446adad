// The published error catalog (DESIGN §5): every code Canon emits, its HTTP status and meaning; docs/errors.md mirrors it.

export interface CatalogEntry {
  status: number;
  description: string;
}

/** Codes are stable and never reused; a test checks this table against docs/errors.md. */
export const ERROR_CATALOG = {
  BAD_REQUEST: { status: 400, description: 'The request is malformed: a bad query, path or header value.' },
  INVALID_JSON: { status: 400, description: 'The body is not valid JSON, is empty, nests too deeply or carries a forbidden key (`__proto__`, `constructor`).' },
  INVALID_QUERY: { status: 400, description: 'A query parameter is unknown, not allowed on this resource, or malformed; `details` names each.' },
  INVALID_PARAMETER: {
    status: 400,
    description: 'A parameter names something that does not exist or no longer does: `after` on `/events` with an unknown event id, or one past the retention period.',
  },
  GRAPHQL_PARSE_FAILED: {
    status: 400,
    description: 'A GraphQL document that does not parse; `locations` says where (GraphQL over HTTP: 400 under `application/graphql-response+json`, 200 under `application/json`).',
  },
  GRAPHQL_VALIDATION_FAILED: {
    status: 400,
    description:
      'A GraphQL document that is not valid against the schema (an unknown field or argument, a wrong type, introspection where it is off), or variables that do not fit it; one error per problem. Nothing ran.',
  },
  QUERY_TOO_COMPLEX: {
    status: 400,
    description:
      'A GraphQL operation deeper or costlier than the limits (`CANON_GRAPHQL_MAX_DEPTH`, `CANON_GRAPHQL_MAX_COST`); `details` gives the measure and the limit. Nothing ran.',
  },
  PERSISTED_QUERY_NOT_FOUND: {
    status: 400,
    description: 'A persisted query’s `sha256Hash` names no query this server registered (`CANON_GRAPHQL_PERSISTED_QUERIES`); send the query itself.',
  },
  UNSUPPORTED_VERSION: {
    status: 400,
    description:
      'The request names an API version this server does not serve (`/v9/…`; `details` lists the versions it serves), or names its version more than once (`?version=1&version=2`).',
  },
  VERSION_SUNSET: {
    status: 410,
    description: 'The API version named has passed its sunset date and is no longer served (`CANON_VERSION_SUNSET=enforce`); the `Link` header points at the migration guide.',
  },
  UNAUTHENTICATED: { status: 401, description: 'Credentials are missing or invalid; the response carries `WWW-Authenticate`.' },
  FORBIDDEN: { status: 403, description: 'The caller is authenticated but not allowed to do this.' },
  INSUFFICIENT_SCOPE: { status: 403, description: 'The credential’s scopes do not cover this request; `WWW-Authenticate` names the scope needed.' },
  CSRF_TOKEN_INVALID: { status: 403, description: 'A cookie-authenticated write lacks the session’s CSRF token (`X-CSRF-Token` or form field `csrf_token`).' },
  CROSS_SITE_REQUEST: {
    status: 403,
    description: 'A login came from another site (`Origin`, `Sec-Fetch-Site` or `Referer`): sessions are created only from the server’s own origin or `CANON_TRUSTED_ORIGINS`.',
  },
  NOT_FOUND: { status: 404, description: 'The resource does not exist, or the caller may not know that it exists.' },
  ROUTE_NOT_FOUND: { status: 404, description: 'No route matches the path.' },
  METHOD_NOT_ALLOWED: { status: 405, description: 'The path exists but not with this method; `Allow` lists the methods it has.' },
  NOT_ACCEPTABLE: { status: 406, description: 'The `Accept` header allows no media type the endpoint can produce.' },
  REQUEST_TIMEOUT: { status: 408, description: 'The client did not send the headers or body within the configured time.' },
  CONFLICT: { status: 409, description: 'The change conflicts with existing data, such as a duplicate unique value.' },
  INVALID_STATE: { status: 409, description: 'The action is not allowed in the object’s current state.' },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, description: 'A request with this Idempotency-Key is still running; retry after it finishes.' },
  PRECONDITION_FAILED: { status: 412, description: 'The `If-Match` header does not match the current ETag.' },
  PAYLOAD_TOO_LARGE: { status: 413, description: 'The body is larger than the limit (1 MiB by default).' },
  URI_TOO_LONG: { status: 414, description: 'The request target is longer than the limit.' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    description: 'The body’s `Content-Type`, its `charset` (only UTF-8) or its `Content-Encoding` (only identity) is not one the endpoint accepts.',
  },
  EXPECTATION_FAILED: { status: 417, description: 'The `Expect` header asks for something other than `100-continue`.' },
  VALIDATION_ERROR: { status: 422, description: 'The body failed validation; `details` has one entry per field.' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, description: 'This Idempotency-Key was used with a different request (method, path or body).' },
  RATE_LIMITED: { status: 429, description: 'Too many requests; wait `Retry-After` seconds. `X-RateLimit-*` headers say which limit.' },
  HEADERS_TOO_LARGE: { status: 431, description: 'The request headers are larger than the limit.' },
  INTERNAL_ERROR: { status: 500, description: 'An unexpected failure; no internals are disclosed. Quote `request_id` when reporting it.' },
  SERVICE_UNAVAILABLE: { status: 503, description: 'The service is overloaded or a dependency is unreachable; retry after `Retry-After`.' },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;
