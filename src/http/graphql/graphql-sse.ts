// GraphQL over Server-Sent Events on /graphql (issue 29.6): graphql-sse's handler in distinct connections mode answers `Accept: text/event-stream`; a subscription is a stream of the event hub, as REST's /events stream.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHandler, print, type ExecutionResult, type Request as SseRequest, type Response as SseResponse } from 'graphql-sse';
import { AppError, isAppError } from '../../errors/app-error.js';
import { EventStream, type CloseReason } from '../../events/stream.js';
import type { EngineRequest, FormattedResult } from '../../graphql/engine.js';
import { formatRequestError } from '../../graphql/errors.js';
import { newestVersion } from '../../model/compile.js';
import type { EventFilter } from '../../store/types.js';
import type { HttpDeps } from '../deps.js';
import { streamCaps } from '../routes/event-routes.js';
import { cookiesOf, verifiedCertificateSha256 } from '../transport/auth-hooks.js';
import { FrameChannel } from './frame-channel.js';

/** What the route hands the protocol handler along with the request: the engine's request and the response to stream on. */
interface Exchange {
  request: FastifyRequest;
  reply: FastifyReply;
  engine: EngineRequest;
}

const EVENT_STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  // As REST's stream: never stored, and proxies such as nginx must not buffer it.
  'cache-control': 'no-cache, no-store',
  'x-accel-buffering': 'no',
};

/** A result as graphql-sse's `next` message: its errors are already in Canon's shape (what a GraphQLError serialises to). */
function nextMessage(result: FormattedResult): string {
  return print({ event: 'next', data: result as unknown as ExecutionResult });
}

const COMPLETE = print({ event: 'complete', data: null });

/** One result as graphql-sse's operation result: it sends it as one `next`, then `complete`. */
async function* once(result: FormattedResult): AsyncGenerator<ExecutionResult> {
  yield result as unknown as ExecutionResult;
}

/**
 * A subscription as a stream of the hub: the same start (after `Last-Event-ID` or `after`), caps, replay and live
 * tail, visibility decided again at every credential change, heartbeats and slow-client cut-off as REST's stream
 * (src/http/routes/event-routes.ts); only its frames differ: graphql-sse's `next` messages with the event's `id:`.
 */
function subscriptionStream(deps: HttpDeps, x: Exchange, answer: Extract<Awaited<ReturnType<HttpDeps['graphql']['stream']>>, { subscription: unknown }>): SseResponse {
  const { request, reply } = x;
  const events = deps.events;
  const principal = x.engine.principal;
  const { start, types, only } = answer.subscription;
  // 429 RATE_LIMITED past the caps: thrown before the response starts, so it is the uniform error body REST's stream answers.
  const release = streamCaps(events).acquire(principal);
  const channel = new FrameChannel(reply.raw);
  const presented = { headers: request.headers, cookies: cookiesOf(request), certificateSha256: verifiedCertificateSha256(request.raw.socket) };
  /** Why the credential lost the stream, told to the client in its last `next` before `complete`. */
  let lost: AppError = new AppError('UNAUTHENTICATED', 'The credential no longer authenticates: the subscription ended.');
  const stream: EventStream = new EventStream(channel, {
    version: newestVersion(deps.model),
    filter: start.filter,
    maxBufferBytes: events.maxBufferBytes,
    render: (event) => `id: ${event.id}\n${nextMessage(answer.render(event))}`,
    ...(only ? { only } : {}),
    reauthorize: async (): Promise<EventFilter | null> => {
      try {
        const now = (await deps.auth.authenticate(presented)).principal;
        // The same credential, or nothing: a cookie's session may have been replaced meanwhile.
        if (now.credentialId !== principal.credentialId) return null;
        return events.feed.filterFor(now, { types });
      } catch (err) {
        if (isAppError(err)) lost = err;
        return null;
      }
    },
    // Revoked, the subscription completes (DESIGN §9: a stream whose principal lost access is closed) with the reason as
    // its last result, so graphql-sse's client stops rather than reconnecting into a 401. Cut off as slow, or at
    // shutdown, it just ends: the client reconnects and resumes after the last `id:` it read.
    farewell: (reason: CloseReason) => (reason === 'revoked' ? `${nextMessage({ errors: [formatRequestError({ error: lost })] })}${COMPLETE}` : undefined),
    onClose: (reason: CloseReason) => {
      events.hub.detach(stream);
      release();
      if (reason !== 'client') deps.log.info({ request_id: request.id, reason }, 'graphql subscription closed');
    },
  });
  stream.field(`retry: ${events.retryMs}`);
  // The hub decides the stream's visibility again before its first event; frames wait in the channel until the
  // response's head is written.
  events.hub.attach(stream, start.after, start.replay).catch((err: unknown) => {
    deps.log.warn({ err, request_id: request.id }, 'graphql subscription replay failed');
    stream.close('error');
  });
  return [channel.body(() => stream.close('client')), { status: 200, statusText: 'OK', headers: EVENT_STREAM_HEADERS }];
}

/** Sends graphql-sse's response: a refusal as it is, a stream on the raw response (hijacked, as REST's stream). */
async function send(deps: HttpDeps, x: Exchange, [body, init]: SseResponse): Promise<FastifyReply> {
  const { request, reply } = x;
  if (body === null || typeof body === 'string')
    return reply
      .code(init.status)
      .headers(init.headers ?? {})
      .send(body ?? undefined);
  const res = reply.raw;
  reply.hijack();
  // graphql-sse's own headers include `content-encoding: none`, which no registered coding is (RFC 9110 §8.4.1): Canon's are sent instead.
  res.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...EVENT_STREAM_HEADERS });
  res.on('close', () => void body.return(undefined));
  try {
    for await (const chunk of body) if (!res.destroyed) res.write(chunk);
    res.end();
  } catch (err) {
    deps.log.warn({ err, request_id: request.id }, 'graphql event stream failed');
    res.destroy();
  }
  return reply;
}

/**
 * The handler of `Accept: text/event-stream` requests to /graphql, after the route's authentication, CSRF check and
 * parsing of the GraphQL parameters (src/http/graphql/graphql-routes.ts). graphql-sse runs the protocol in distinct
 * connections mode only: single connection mode reserves a stream per token in one process's memory, which a second
 * process behind the same address never sees.
 */
export function graphqlStreamHandler(deps: HttpDeps): (request: FastifyRequest, reply: FastifyReply, engine: EngineRequest) => Promise<FastifyReply> {
  const handler = createHandler<FastifyRequest, Exchange>({
    authenticate: () => null,
    onSubscribe: async (req: SseRequest<FastifyRequest, Exchange>) => {
      const x = req.context;
      const answer = await deps.graphql.stream(x.engine);
      if ('result' in answer) return once(answer.result);
      return subscriptionStream(deps, x, answer);
    },
  });
  return async (request, reply, engine) => {
    const x: Exchange = { request, reply, engine };
    // The parameters were parsed and checked by the route (a GET's query, a POST's JSON body, a persisted query's
    // hash): graphql-sse is handed them as the JSON body it parses, and the engine reads the route's own.
    const response = await handler({
      method: 'POST',
      url: request.url,
      headers: { get: (key: string) => (key === 'accept' ? 'text/event-stream' : key === 'content-type' ? 'application/json' : undefined) },
      body: { query: engine.params.query ?? '' },
      raw: request,
      context: x,
    });
    return send(deps, x, response);
  };
}
