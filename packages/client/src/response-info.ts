// What an answer said besides its body (ETag, Location, the request id), kept beside the parsed body so methods can resolve with the body alone (DESIGN §7) and still let callers read the validator for `ifMatch`.
import type { Reply } from './transport.js';

export interface ResponseInfo {
  status: number;
  /** The strong validator of a single object (DESIGN §5), for `update(id, patch, { ifMatch })`; lists have a weak one. */
  etag: string | undefined;
  lastModified: string | undefined;
  location: string | undefined;
  /** `X-Request-Id`: quote it when reporting a problem. */
  requestId: string | undefined;
  /** `Idempotent-Replayed: true`: the answer is the stored one of an earlier request with the same key (DESIGN §11). */
  replayed: boolean;
  /** True when the body came from the ETag cache after a 304. */
  fromCache: boolean;
  headers: Headers;
}

/** What a body keeps of its reply. */
interface Kept {
  status: number;
  headers: Headers;
  fromCache: boolean;
}

/**
 * Where a body keeps its reply: a non-enumerable symbol property, which JSON.stringify, spreads, `Object.keys`
 * and deep equality leave out. Not a WeakMap keyed by the body: measured, its ephemeron bookkeeping made the
 * garbage collector cost a 20-item page about 20 µs more per call (bench/client.mjs, packages/client/README.md).
 */
const REPLY: unique symbol = Symbol('canon-client reply');

/** The body of a reply, remembered with the reply's facts when it is an object; they are read from the headers only when asked for. */
export function bodyOf(reply: Reply): unknown {
  const { body } = reply;
  if (typeof body === 'object' && body !== null) {
    const kept: Kept = { status: reply.status, headers: reply.headers, fromCache: reply.fromCache };
    Object.defineProperty(body, REPLY, { value: kept, configurable: true });
  }
  return body;
}

/** The answer a body came with: `responseOf(await client.products.get(id))?.etag`. Undefined for a value no method returned. */
export function responseOf(body: object): ResponseInfo | undefined {
  const kept = (body as { [REPLY]?: Kept })[REPLY];
  if (kept === undefined) return undefined;
  const h = kept.headers;
  return {
    status: kept.status,
    etag: h.get('etag') ?? undefined,
    lastModified: h.get('last-modified') ?? undefined,
    location: h.get('location') ?? undefined,
    requestId: h.get('x-request-id') ?? undefined,
    replayed: h.get('idempotent-replayed') === 'true',
    fromCache: kept.fromCache,
    headers: h,
  };
}
