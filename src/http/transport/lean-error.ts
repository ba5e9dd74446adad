// The error answer of a request a lean path (fast-reads.ts, src/http/graphql/fast-graphql.ts) took: the body and headers Fastify's error handler sends (DESIGN §5).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpDeps } from '../deps.js';
import { errorResponse, toAppError } from '../rendering/error-body.js';
import { loggableUrl } from './loggable-url.js';

/**
 * Writes `err` in the uniform error body after the headers the path had gathered (request id, fixed and rate-limit
 * headers). Returns false when the response had begun already: the connection is cut, as Fastify cuts it.
 */
export function writeLeanError(deps: HttpDeps, req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, requestId: string, err: unknown): boolean {
  const { error, internal } = toAppError(err);
  // 5xx never leak internals to the client; the log keeps the cause, joined by the request id.
  if (internal) deps.log.error({ err, request_id: requestId, method: req.method, url: loggableUrl(req.url ?? '') }, 'unhandled error');
  if (res.headersSent) {
    res.destroy();
    return false;
  }
  const { status, headers: errorHeaders, json } = errorResponse(error, requestId, deps.cookieNames);
  res.writeHead(status, { ...headers, ...errorHeaders, 'content-length': String(Buffer.byteLength(json)) });
  res.end(json);
  return true;
}
