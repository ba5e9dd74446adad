// The GraphQL endpoint over HTTP (GraphQL over HTTP draft, DESIGN §7): `GET /graphql` and `POST /graphql` mapped to the engine (src/graphql/engine.ts), its answer rendered.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { preferredMediaType } from '../transport/negotiate.js';
import { AppError, isAppError } from '../../errors/app-error.js';
import type { EngineRequest, EngineResponse, ResponseMedia } from '../../graphql/engine.js';
import { formatRequestError } from '../../graphql/errors.js';
import { paramsFromBody, paramsFromQuery, type GraphqlParams } from '../../graphql/request.js';
import type { Principal } from '../../model/principal.js';
import { rateHeaders, rateLimited } from '../../limits/rate-limiter.js';
import { authHook, csrfHook } from '../transport/auth-hooks.js';
import type { HttpDeps } from '../deps.js';
import { factHeaders } from '../rendering/error-facts.js';
import { loggableUrl } from '../transport/loggable-url.js';
import { graphiqlHandlers, wantsGraphiql } from './graphiql-routes.js';
import type { RouteSpec } from '../routes/operation-routes.js';
import { wantsEventStream } from '../routes/event-routes.js';
import { graphqlStreamHandler } from './graphql-sse.js';

/** The media types in the order ties are broken: any type, or no Accept, gets application/json, the legacy default (§6.4). */
const BY_PREFERENCE: ResponseMedia[] = ['application/json', 'application/graphql-response+json'];

/** The response's media type for an Accept header, or undefined when it allows neither (406). */
export function graphqlMediaOf(accept: string | undefined): ResponseMedia | undefined {
  if (accept === undefined || accept === '') return 'application/json';
  return mediaByAccept(accept);
}

const mediaByAccept = preferredMediaType<ResponseMedia>(BY_PREFERENCE);

/** Whether the Accept header allows a GraphQL response (the app's 406 check asks before routing). */
export function acceptsGraphql(accept: string | undefined): boolean {
  return graphqlMediaOf(accept) !== undefined || wantsEventStream(accept);
}

/**
 * The Idempotency-Key, sent once (as REST reads it, src/http/idempotent.ts): a repeated header would be joined into
 * a third key by Node, so a repeat is 400.
 */
function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return undefined;
  const raw = request.raw.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'idempotency-key') seen++;
  if (seen > 1 || Array.isArray(value)) {
    throw new AppError('BAD_REQUEST', 'Send one Idempotency-Key header, not several.', { details: [{ field: 'Idempotency-Key', message: 'must be sent once' }] });
  }
  return value;
}

/** A reconnection's `Last-Event-ID` (WHATWG HTML §9.2.4), which a subscription resumes after; an empty one is none. */
function lastEventIdOf(request: FastifyRequest): { lastEventId?: string } {
  const header = request.headers['last-event-id'];
  return typeof header === 'string' && header !== '' ? { lastEventId: header } : {};
}

/** A GraphQL answer or refusal as an HTTP response: status, headers (Content-Type among them) and JSON text. */
export interface GraphqlHttpAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
}

/**
 * A refusal before the operation is looked at (credentials, CSRF, the per-request rate limit). Under
 * application/graphql-response+json it is GraphQL's `{errors}` with the refusal's status (§6.4.2: a response
 * without data is 4xx), so a GraphQL client reads `extensions.code` (UNAUTHENTICATED); under application/json
 * (undefined here) the uniform error body, as every endpoint answers it.
 */
export function graphqlRefusal(deps: HttpDeps, accept: string | undefined, err: unknown): GraphqlHttpAnswer | undefined {
  if (!isAppError(err) || graphqlMediaOf(accept) !== 'application/graphql-response+json') return undefined;
  return {
    status: err.status,
    headers: { ...factHeaders(err.facts, deps.cookieNames), ...err.headers, 'cache-control': 'no-store', 'content-type': 'application/graphql-response+json; charset=utf-8' },
    body: JSON.stringify({ errors: [formatRequestError({ error: err })] }),
  };
}

function refuse(deps: HttpDeps, request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const refusal = graphqlRefusal(deps, request.headers.accept, err);
  if (refusal === undefined) throw err;
  return reply.code(refusal.status).headers(refusal.headers).send(refusal.body);
}

/** The engine's response over HTTP. */
export function graphqlAnswer(deps: HttpDeps, response: EngineResponse, media: ResponseMedia, post: boolean): GraphqlHttpAnswer {
  const headers = factHeaders(response.facts, deps.cookieNames);
  // Answers of one caller: a query by GET may be kept by its browser, but asked again (RFC 9111 §5.2.2); a POST's never.
  headers['cache-control'] = post ? 'no-store' : 'private, no-cache';
  if (response.replayed) headers['idempotent-replayed'] = 'true';
  headers['content-type'] = `${media}; charset=utf-8`;
  return { status: response.status, headers, body: response.body };
}

/** The engine request of a POST or GET: `setHeaders` receives the rate-limit headers of the operation's charge. */
export function engineRequestOf(
  deps: HttpDeps,
  r: {
    post: boolean;
    params: GraphqlParams;
    principal: Principal;
    media: ResponseMedia;
    idempotencyKey: string | undefined;
    requestId: string;
    method: string;
    url: string;
    since?: number;
  },
  setHeaders: (headers: Record<string, string>) => void,
): EngineRequest {
  const { principal } = r;
  return {
    method: r.post ? 'POST' : 'GET',
    params: r.params,
    principal,
    media: r.media,
    idempotencyKey: r.idempotencyKey,
    since: r.since,
    charge: async (units) => {
      if (!deps.limiter.limits.enabled) return;
      const verdict = await deps.limiter.forPrincipal(principal, units);
      setHeaders(rateHeaders(verdict.shown));
      if (verdict.refused) throw rateLimited(verdict);
    },
    internal: (cause) => deps.log.error({ err: cause, request_id: r.requestId, method: r.method, url: loggableUrl(r.url) }, 'unhandled error'),
  };
}

/** The handlers of `graphql.query` (GET) and `graphql.execute` (POST) (src/catalog/graphql-operations.ts), and GraphiQL's (graphiql-routes.ts). */
export function graphqlHandlers(deps: HttpDeps): Record<string, RouteSpec> {
  const auth = authHook(deps);
  const csrf = csrfHook(deps);
  // A browser's GET gets the public GraphiQL page instead (wantsGraphiql); every other request is the endpoint's.
  const graphiql = graphiqlHandlers(deps);
  const onRequest: RouteSpec['onRequest'] = async (request, reply) => {
    if (wantsGraphiql(request)) return graphiql.page.onRequest(request, reply);
    try {
      await auth(request, reply);
    } catch (err) {
      return refuse(deps, request, reply, err);
    }
  };
  const preHandler: RouteSpec['preHandler'] = async (request, reply) => {
    try {
      await csrf(request);
    } catch (err) {
      return refuse(deps, request, reply, err);
    }
  };
  const stream = graphqlStreamHandler(deps);
  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    if (wantsGraphiql(request)) return graphiql.page.handler(request, reply);
    const post = request.method === 'POST';
    // GraphQL over HTTP §5.1: POST bodies are JSON; a form could be posted by any page of another site.
    if (post && request.bodyFormat === 'form') throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send a GraphQL request as application/json.');
    const params = post ? paramsFromBody(request.body) : paramsFromQuery(request.query as Record<string, string | string[] | undefined>);
    const media = graphqlMediaOf(request.headers.accept) ?? 'application/json';
    const engineRequest = engineRequestOf(
      deps,
      {
        post,
        params,
        principal: request.principal!,
        media,
        idempotencyKey: post ? idempotencyKeyOf(request) : undefined,
        requestId: String(request.id),
        method: request.method,
        url: request.url,
        since: request.arrivedAt ?? undefined,
      },
      (headers) => reply.headers(headers),
    );
    // GraphQL over SSE (src/http/graphql/graphql-sse.ts): subscriptions, and any operation as one `next`.
    if (wantsEventStream(request.headers.accept)) return stream(request, reply, { ...engineRequest, ...lastEventIdOf(request) });
    const answer = graphqlAnswer(deps, await deps.graphql.handle(engineRequest), media, post);
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  };
  return {
    'graphql.query': { onRequest, handler },
    'graphql.execute': { onRequest, preHandler, handler },
    ...graphiql.routes,
  };
}
