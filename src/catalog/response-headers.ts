// The response headers of every operation by status (DESIGN §4–§10), as the catalog declares them: what the OpenAPI document lists and the test harness checks on every response.
import type { JsonSchema } from '../model/schema.js';
import type { Operation } from './operation.js';

export interface HeaderSpec {
  name: string;
  description: string;
  schema: JsonSchema;
  /** Present on every response of that status (the harness checks it); otherwise present when it applies. */
  required: boolean;
}

const STRING: JsonSchema = { type: 'string' };
const INTEGER: JsonSchema = { type: 'integer', minimum: 0 };

/** Every header the catalog knows, by name. */
export const HEADERS = {
  requestId: { name: 'X-Request-Id', description: 'The request’s id; equals `request_id` of an error body (spec §5).', schema: STRING },
  etag: { name: 'ETag', description: 'The representation’s validator (RFC 9110 §8.8.3); weak on pages.', schema: STRING },
  lastModified: { name: 'Last-Modified', description: 'When the object last changed (RFC 9110 §8.8.2).', schema: STRING },
  location: { name: 'Location', description: 'Where the new object (201) or the operation’s outcome (202) is read.', schema: STRING },
  link: { name: 'Link', description: 'RFC 8288 links: `next`/`prev` pages; `deprecation` on a deprecated version.', schema: STRING },
  limit: { name: 'X-RateLimit-Limit', description: 'Requests allowed in the current window.', schema: INTEGER },
  remaining: { name: 'X-RateLimit-Remaining', description: 'Requests left in the current window.', schema: INTEGER },
  reset: { name: 'X-RateLimit-Reset', description: 'When the window resets (Unix seconds).', schema: INTEGER },
  retryAfter: { name: 'Retry-After', description: 'Seconds to wait before trying again (RFC 9110 §10.2.3).', schema: INTEGER },
  replayed: {
    name: 'Idempotent-Replayed',
    description: '`true` when the response is the stored answer to an earlier request with the same `Idempotency-Key`.',
    schema: { type: 'string', enum: ['true'] },
  },
  deprecation: { name: 'Deprecation', description: 'When this API version was deprecated (RFC 9745, `@` Unix seconds).', schema: STRING },
  sunset: { name: 'Sunset', description: 'When this API version may stop being served (RFC 8594).', schema: STRING },
  wwwAuthenticate: { name: 'WWW-Authenticate', description: 'The authentication schemes accepted, and why this attempt failed (RFC 9110 §11.6.1, RFC 6750 §3).', schema: STRING },
  vary: { name: 'Vary', description: 'The request headers the response depends on (RFC 9110 §12.5.5).', schema: STRING },
  cacheControl: { name: 'Cache-Control', description: 'How the response may be cached (RFC 9111 §5.2).', schema: STRING },
  allow: { name: 'Allow', description: 'The methods the path has (RFC 9110 §10.2.1).', schema: STRING },
} as const satisfies Record<string, Omit<HeaderSpec, 'required'>>;

type Known = keyof typeof HEADERS;

function spec(key: Known, required: boolean): HeaderSpec {
  return { ...HEADERS[key], required };
}

/** Operations answering with one object and its validators (src/http/routes/resource-routes.ts objectResponse). */
const OBJECT_KINDS: ReadonlySet<string> = new Set(['create', 'read', 'replace', 'update']);

/**
 * The headers of `op`'s responses with `status`. `deprecated`: the operation's version is deprecated (every
 * response then says so, errors and 304s included).
 */
export function responseHeaders(op: Operation, status: number, deprecated = false): HeaderSpec[] {
  const out: HeaderSpec[] = [spec('requestId', true)];
  const success = status >= 200 && status < 300;
  // Objects and pages carry validators; so does anything that takes If-None-Match (the documents, /docs).
  const conditional = (op.input.headers?.properties as Record<string, unknown> | undefined)?.['if-none-match'] !== undefined;
  if ((success && (OBJECT_KINDS.has(op.kind) || op.kind === 'list' || conditional)) || status === 304) out.push(spec('etag', true));
  if (op.kind !== 'platform' && ((success && OBJECT_KINDS.has(op.kind)) || (status === 304 && op.kind === 'read'))) out.push(spec('lastModified', true));
  // A 202 says where its progress is read: an asynchronous action's outcome, or the object a retried delivery is.
  if (status === 201 || status === 202) out.push(spec('location', true));
  if (op.kind === 'list' && status === 200) out.push(spec('link', false));
  if (op.authentication === 'required') out.push(spec('limit', false), spec('remaining', false), spec('reset', false));
  if (status === 429) out.push(spec('retryAfter', true));
  if (status === 503) out.push(spec('retryAfter', false));
  if (op.idempotent && success) out.push(spec('replayed', false));
  if (status === 401 && op.authentication === 'required') out.push(spec('wwwAuthenticate', true));
  // The token endpoint challenges with Basic when the client tried Basic (RFC 6749 §5.2).
  if (status === 401 && op.authentication === 'client') out.push(spec('wwwAuthenticate', false));
  if (status === 403 && op.authentication === 'required') out.push(spec('wwwAuthenticate', false));
  // Link is always there then: it carries rel="deprecation" beside any page links.
  if (deprecated) out.push(spec('deprecation', true), spec('sunset', true), spec('link', true));
  if (status === 405) out.push(spec('allow', true));
  if (success) out.push(spec('cacheControl', false));
  out.push(spec('vary', false));
  // One entry per name, the last one decided winning.
  return [...new Map(out.map((h) => [h.name, h])).values()];
}
