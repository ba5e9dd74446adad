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

/** The reply each body came in; its facts are read from the headers only when asked for (most callers never ask). */
const replies = new WeakMap<object, Reply>();

/** The body of a reply, remembered with the reply when it is an object. */
export function bodyOf(reply: Reply): unknown {
  const { body } = reply;
  if (typeof body === 'object' && body !== null) replies.set(body, reply);
  return body;
}

/** The answer a body came with: `responseOf(await client.products.get(id))?.etag`. Undefined for a value no method returned. */
export function responseOf(body: object): ResponseInfo | undefined {
  const reply = replies.get(body);
  if (reply === undefined) return undefined;
  const h = reply.headers;
  return {
    status: reply.status,
    etag: h.get('etag') ?? undefined,
    lastModified: h.get('last-modified') ?? undefined,
    location: h.get('location') ?? undefined,
    requestId: h.get('x-request-id') ?? undefined,
    replayed: h.get('idempotent-replayed') === 'true',
    fromCache: reply.fromCache,
    headers: h,
  };
}
