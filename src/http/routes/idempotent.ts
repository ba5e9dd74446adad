// Maps a POST's Idempotency-Key header onto the idempotent execution use case (src/services/idempotent.ts) and sends its outcome.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import type { StoredResponse } from '../../services/idempotency.js';
import type { Within } from '../../services/resource-service.js';
import type { HttpDeps } from '../deps.js';
import { JSON_CONTENT_TYPE } from '../transport/negotiate.js';

/** Sends a rendered response; its body is JSON already, so Fastify sends the string as it is. */
export function send(reply: FastifyReply, response: StoredResponse, replayed = false): string {
  reply.code(response.status);
  for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
  if (replayed) reply.header('idempotent-replayed', 'true');
  reply.type(JSON_CONTENT_TYPE);
  return response.body;
}

/**
 * The Idempotency-Key, sent once. Node joins a repeated header into one value (`a, b`), which is itself a
 * valid key: two keys in one request would silently become a third. So a repeat is 400, like any other
 * malformed key (RFC 9110 §5.3: only list-valued fields may be repeated, and this one is not a list).
 */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return undefined;
  const raw = request.raw.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 15 && raw[i]!.toLowerCase() === 'idempotency-key') seen++;
  if (seen > 1 || Array.isArray(value)) {
    throw new AppError('BAD_REQUEST', 'Send one Idempotency-Key header, not several.', { details: [{ field: 'Idempotency-Key', message: 'must be sent once' }] });
  }
  return value;
}

/**
 * `run` performs the change, handing the `within` it is given to its transaction; `render` turns the
 * result into the response, once, so the stored and the sent response are the same. A replay carries
 * `Idempotent-Replayed: true`.
 */
export async function idempotent<T>(
  deps: HttpDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  run: (within?: Within<T>) => Promise<T>,
  render: (result: T) => StoredResponse,
): Promise<unknown> {
  const outcome = await deps.idempotent.execute({
    key: idempotencyKeyOf(request),
    principal: request.principal!,
    fingerprint: { method: request.method, url: request.url, body: request.body },
    run,
    render,
  });
  return send(reply, outcome.response, outcome.replayed);
}
