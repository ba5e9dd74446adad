// What one operation of the API is, as pure data: the single description that routing, OPTIONS/405, the lean read path and the tests read (and OpenAPI, GraphQL and the client will).
import type { ErrorCode } from '../errors/catalog.js';
import type { JsonSchema } from '../model/schema.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * What an operation does. Resource operations (`list` … `operation`, the state of an asynchronous action) are derived from the model and handled alike
 * for every resource; `platform` operations (sessions, the token endpoint, health) each have their own handler.
 */
export type OperationKind = 'list' | 'create' | 'read' | 'replace' | 'update' | 'delete' | 'action' | 'view' | 'operation' | 'platform';

/** How a request is authenticated: any credential (DESIGN §8), none at all, or the OAuth client's own (the token endpoint). */
export type Authentication = 'required' | 'none' | 'client';

export interface OperationInput {
  /** Path parameters (`id`), as one object schema. */
  path?: JsonSchema;
  /** Query parameters, as one object schema (filters as `field` and `field[op]` properties). */
  query?: JsonSchema;
  /** Request headers the operation reads besides authentication (`If-Match`, `Idempotency-Key`). */
  headers?: JsonSchema;
  /** The body, by content type. */
  body?: Record<string, JsonSchema>;
}

export interface Operation {
  /** Stable and unique: `v2.products.list`, `v2.orders.cancel`, `oauth.token`. */
  id: string;
  method: HttpMethod;
  /** The path template with `:name` parameters, as routed. */
  path: string;
  kind: OperationKind;
  /** Resource operations: the version, the resource, the parent of a nested collection, the action's name. */
  version?: string;
  resource?: string;
  parent?: { resource: string; field: string };
  action?: string;
  input: OperationInput;
  /** The response body by status; null for a response without a body (204, 304). */
  output: Record<number, JsonSchema | null>;
  /** The media types of the success body when not only JSON (`text/markdown`, `text/event-stream` beside JSON). */
  produces?: string[];
  /** What a `text/event-stream` success body carries, when not the event stream of `/events`. */
  streamDescription?: string;
  /**
   * Error bodies in media types besides the uniform JSON one (DESIGN §5), by media type: GraphQL's `{errors}` under
   * `application/graphql-response+json` (GraphQL over HTTP §6.4.2).
   */
  errorContent?: Record<string, JsonSchema>;
  /**
   * Success bodies of a `produces` type that are not the output's schema, by media type: the GraphiQL page
   * (`text/html`) that `GET /graphql` answers a browser.
   */
  successContent?: Record<string, JsonSchema>;
  /** A short title for documentation; the description's first sentence when absent. */
  summary?: string;
  /** Every error code the operation can answer with (each has its status in the error catalog). */
  errors: ErrorCode[];
  authentication: Authentication;
  /** Who may call it: roles, `owner`, `authenticated` (empty: anyone who reaches it). */
  grants: string[];
  /** The scopes a restricted credential needs (any one of them). */
  scopes: string[];
  /** Whether cookie-authenticated calls need the CSRF token (unsafe methods). */
  csrf: boolean;
  /** Whether `Idempotency-Key` is honoured. */
  idempotent: boolean;
  description: string;
}
