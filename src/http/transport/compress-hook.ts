// Sends Fastify responses in the content coding the request accepts (issue 31.5): the conditional GETs choose theirs before If-None-Match, an onSend hook codes every other response.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { codedEtag, ifNoneMatchHits } from '../rendering/conditional.js';
import { varyWithAcceptEncoding, type Coding, type Compression } from '../rendering/compression.js';

/** Replies whose coding a handler chose itself (a conditional GET): the hook leaves them as they are. */
const chosen = new WeakSet<FastifyReply>();

/**
 * Sends `body` in `coding` with the headers that go with it: Vary (RFC 9110 §12.5.5) whenever compression is on,
 * since the same URL answers other bytes to another Accept-Encoding; Content-Encoding when coded. `memo`: the body is
 * a rendering that is sent again (src/http/rendering/compression.ts). The ETag is the caller's, already of `coding`.
 */
export function sendCoded(reply: FastifyReply, compression: Compression, coding: Coding, body: string | Buffer, contentType: string, memo: boolean): FastifyReply {
  chosen.add(reply);
  if (compression.enabled) reply.header('vary', varyWithAcceptEncoding(reply.getHeader('vary')));
  reply.type(contentType);
  if (coding === 'identity') return reply.send(body);
  return reply.header('content-encoding', coding).send(compression.encode(body, coding, memo));
}

/** A 304 of a conditional GET: the ETag of the coding a 200 would have had, and the same Vary (RFC 9110 §15.4.5). */
export function sendNotModified(reply: FastifyReply, compression: Compression): FastifyReply {
  chosen.add(reply);
  if (compression.enabled) reply.header('vary', varyWithAcceptEncoding(reply.getHeader('vary')));
  return reply.code(304).send();
}

/** How a conditional GET answers: the coding its body would be sent in, that coding's ETag, and whether If-None-Match holds it. */
export interface Representation {
  coding: Coding;
  etag: string;
  notModified: boolean;
}

/**
 * The coding is chosen first, so that If-None-Match is compared with the ETag of the representation that would be
 * sent (RFC 9110 §13.1.2). Plain inputs: sendRepresentation and the lean list path (fast-lists.ts) both decide here.
 */
export function representationOf(
  compression: Compression,
  acceptEncoding: string | string[] | undefined,
  ifNoneMatch: string | string[] | undefined,
  r: { body: string | Buffer; etag: string; contentType: string },
): Representation {
  const coding = compression.compressible(r.contentType) ? compression.codingFor(acceptEncoding, r.body) : 'identity';
  const etag = codedEtag(r.etag, coding);
  return { coding, etag, notModified: typeof ifNoneMatch === 'string' && ifNoneMatchHits(ifNoneMatch, etag) };
}

/** A conditional GET of a body with a validator (a list page, a /docs file), sent as representationOf decides. */
export function sendRepresentation(
  request: FastifyRequest,
  reply: FastifyReply,
  compression: Compression,
  r: { body: string | Buffer; etag: string; contentType: string; memo: boolean },
): FastifyReply {
  const representation = representationOf(compression, request.headers['accept-encoding'], request.headers['if-none-match'], r);
  reply.header('etag', representation.etag);
  if (representation.notModified) return sendNotModified(reply, compression);
  return sendCoded(reply, compression, representation.coding, r.body, r.contentType, r.memo);
}

/**
 * Codes every other response with a body worth it: 200 and 201 only (a 202's or an error's few bytes, and 204, 206
 * and 304, never), a compressible type, and not `no-store`: those carry secrets (a revealed key, a token, a CSRF
 * token), and compressing a secret beside text an attacker chose lets the compressed length reveal it (BREACH). A
 * stream (the event stream is hijacked and never gets here) passes untouched. A coded response's ETag is its coding's.
 */
export function registerCompression(app: FastifyInstance, compression: Compression): void {
  if (!compression.enabled) return;
  app.addHook('onSend', (request, reply, payload, done) => {
    const status = reply.statusCode;
    if ((status !== 200 && status !== 201) || chosen.has(reply) || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) return done(null, payload);
    const type = reply.getHeader('content-type');
    if (typeof type !== 'string' || !compression.compressible(type) || reply.hasHeader('content-encoding')) return done(null, payload);
    const cacheControl = reply.getHeader('cache-control');
    if (typeof cacheControl === 'string' && cacheControl.includes('no-store')) return done(null, payload);
    reply.header('vary', varyWithAcceptEncoding(reply.getHeader('vary')));
    const coding = compression.codingFor(request.headers['accept-encoding'], payload);
    if (coding === 'identity') return done(null, payload);
    const bytes = compression.encode(payload, coding);
    reply.header('content-encoding', coding).header('content-length', String(bytes.length));
    const etag = reply.getHeader('etag');
    if (typeof etag === 'string') reply.header('etag', codedEtag(etag, coding));
    done(null, bytes);
  });
}
