// GET /events: the event list in the §6 cursor shape, or with `Accept: text/event-stream` the live stream that resumes by Last-Event-ID.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { preferredMediaType } from '../transport/negotiate.js';
import { EventStream, type CloseReason } from '../../events/stream.js';
import { StreamCaps } from '../../events/stream-caps.js';
import { newestVersion } from '../../model/compile.js';
import type { ApiVersion } from '../../model/versions.js';
import type { Principal } from '../../model/principal.js';
import { cookiesOf, verifiedCertificateSha256 } from '../transport/auth-hooks.js';
import type { EventDeps, HttpDeps } from '../deps.js';
import type { RouteSpec } from './operation-routes.js';
import { authHook } from '../transport/auth-hooks.js';
import { feedRequestOf, type FeedQuery } from './event-query.js';
import { renderEventPage } from '../rendering/event-page.js';

export const EVENTS_PATH = '/events';
const EVENT_STREAM = 'text/event-stream';

/** The process's count of open streams (shared with GraphQL subscriptions), made once from the limits when the composition root gave none. */
export function streamCaps(events: EventDeps): StreamCaps {
  events.caps ??= new StreamCaps({ perCredential: events.maxStreamsPerPrincipal, perUser: events.maxStreamsPerUser });
  return events.caps;
}

/** Whether the client asks for the stream: `text/event-stream` preferred over JSON (RFC 9110 §12.5.1). */
export function wantsEventStream(accept: string | undefined): boolean {
  if (!accept) return false;
  return streamOrJson(accept) === EVENT_STREAM;
}

const streamOrJson = preferredMediaType(['application/json', EVENT_STREAM]);

/**
 * The version payloads are rendered in (DESIGN §9, §10). `/events` has no version segment under any strategy:
 * the request names one the strategy's way (header, parameter, media type, `Canon-Version`), else the
 * credential's pin decides, else the current version. Default: the current version.
 */
export type EventVersion = (request: FastifyRequest, principal: Principal) => ApiVersion;

/** The query strategy's `version`/`v` chose the version: they are not feed parameters then (under others they are refused as unknown). */
function feedQuery(query: FeedQuery, versionParams: boolean): FeedQuery {
  if (!versionParams || (query.version === undefined && query.v === undefined)) return query;
  const rest = { ...query };
  delete rest.version;
  delete rest.v;
  return rest;
}

export function eventHandlers(deps: HttpDeps, events: EventDeps, versionOf: EventVersion = () => newestVersion(deps.model)): Record<string, RouteSpec> {
  const caps = streamCaps(events);
  const list: RouteSpec = {
    onRequest: authHook(deps),
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const principal = request.principal!;
      const version = versionOf(request, principal);
      if (deps.config.versioning === 'date') reply.header('canon-version', version.date);
      const query = feedQuery(request.query as FeedQuery, deps.config.versioning === 'query');
      if (wantsEventStream(request.headers.accept)) {
        const header = request.headers['last-event-id'];
        const lastEventId = typeof header === 'string' && header !== '' ? header : undefined;
        const feedRequest = feedRequestOf(events.feed, query, lastEventId);
        const start = await events.feed.startStream(principal, feedRequest, lastEventId !== undefined ? 'Last-Event-ID' : 'after');
        const release = caps.acquire(principal);
        const res = reply.raw;
        reply.hijack();
        res.writeHead(200, {
          ...(reply.getHeaders() as Record<string, string>),
          'content-type': `${EVENT_STREAM}; charset=utf-8`,
          'cache-control': 'no-cache, no-store',
          // Proxies such as nginx buffer responses unless told otherwise; a stream must flow.
          'x-accel-buffering': 'no',
        });
        // The credential as presented: authenticated again whenever credentials change, and what it may see then
        // decides every event sent after (src/events/stream-guard.ts).
        const presented = { headers: request.headers, cookies: cookiesOf(request), certificateSha256: verifiedCertificateSha256(request.raw.socket) };
        const stream = new EventStream(
          { write: (chunk) => res.write(chunk), buffered: () => res.writableLength, end: () => res.end(), destroy: () => res.destroy() },
          {
            version,
            filter: start.filter,
            maxBufferBytes: events.maxBufferBytes,
            reauthorize: async () => {
              const now = (await deps.auth.authenticate(presented)).principal;
              // The same credential, or nothing: a header cannot change, but a cookie's session may have been replaced.
              return now.credentialId === principal.credentialId ? events.feed.filterFor(now, feedRequest) : null;
            },
            onClose: (reason: CloseReason) => {
              events.hub.detach(stream);
              release();
              if (reason !== 'client') deps.log.info({ request_id: request.id, reason }, 'event stream closed');
            },
          },
        );
        res.on('close', () => stream.close('client'));
        stream.field(`retry: ${events.retryMs}`);
        try {
          // The hub decides the stream's visibility again before its first event: a change committed since the
          // authentication above is seen.
          await events.hub.attach(stream, start.after, start.replay);
        } catch (err) {
          // The response is hijacked, so the error cannot become an error response; left attached but never live,
          // the stream would hang its client on heartbeats alone. It ends, and the client resumes by Last-Event-ID.
          deps.log.warn({ err, request_id: request.id }, 'event stream replay failed');
          stream.close('error');
        }
        return reply;
      }
      const feedRequest = feedRequestOf(events.feed, query);
      const page = await events.feed.page(principal, feedRequest);
      reply.header('cache-control', 'private, no-cache');
      return renderEventPage(reply, version, { path: EVENTS_PATH, self: request.url }, feedRequest, page);
    },
  };
  return { 'events.list': list };
}
