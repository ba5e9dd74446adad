// Builds the Fastify application: socket limits, parsers, negotiation, the error body everywhere, and the generated routes.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Principal } from '../../model/principal.js';
import { AppError } from '../../errors/app-error.js';
import type { CookieNames } from '../../auth/session-cookies.js';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { oauthHandlers } from '../routes/oauth-routes.js';
import { registerOverload } from './overload.js';
import { sessionHandlers } from '../routes/session-routes.js';
import { limitIp, verifiedCertificateSha256 } from './auth-hooks.js';
import { MALFORMED, parseQuery, type ParsedQuery } from './query-string.js';
import { guardFraming } from './framing-guard.js';
import { HookRegistry } from './hook-registry.js';
import { loggableUrl } from './loggable-url.js';
import { rawHeaderLines, securityHeaders } from './security-headers.js';
import { sunsetError, VersionHeaders } from '../versioning/version-headers.js';
import { acceptsVendorJson, mediaTypeHook, pinningListener, repeatedVersionOf, unsupportedVersionOf, VersionSelector } from '../versioning/version-selection.js';
import { openApiHandlers } from '../routes/openapi-routes.js';
import { DocumentCache } from '../rendering/document-cache.js';
import { FastDocuments } from './fast-documents.js';
import { guideHandlers } from '../routes/guide-routes.js';
import { DOCUMENTATION_PATHS } from '../../catalog/docs-operations.js';
import { docsHandlers } from '../routes/docs-routes.js';
import { errorInVersion } from '../../query/versioned-query.js';
import type { VersionOfRoute } from '../routes/resource-routes.js';
import { errorBody, errorResponse, toAppError } from '../rendering/error-body.js';
import { registerBodyParsers } from './body-parsers.js';
import { acceptsJson } from './negotiate.js';
import { resourceRoutes } from '../routes/resource-routes.js';
import { registerOperations } from '../routes/operation-routes.js';
import { requestIdFrom } from './request-id.js';
import { FastReads } from './fast-reads.js';
import { FastLists } from './fast-lists.js';
import { FastGraphql, GRAPHQL_EXECUTE_PATH } from '../graphql/fast-graphql.js';
import { metricsGuard, serviceHandlers } from '../routes/service-routes.js';
import { EVENTS_PATH, eventHandlers, wantsEventStream, type EventVersion } from '../routes/event-routes.js';
import { GRAPHQL_PATH } from '../../catalog/graphql-operations.js';
import { acceptsGraphql, graphqlHandlers } from '../graphql/graphql-routes.js';
import { wantsGraphiql } from '../graphql/graphiql-routes.js';
import type { HttpDeps } from '../deps.js';
import { Compression } from '../rendering/compression.js';
import { registerCompression } from './compress-hook.js';

export type { HttpDeps } from '../deps.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** How many requests the lean GET path answered (src/http/transport/fast-reads.ts). */
    fastReads: { served: number; immediate: number; declined: Record<string, string> };
    /** How many collection pages the lean list path answered, and the routes it declined (src/http/transport/fast-lists.ts). */
    fastLists: { served: number; declined: Record<string, string> };
    /** How many OpenAPI documents the lean path answered (src/http/transport/fast-documents.ts). */
    fastDocuments: { served: number };
    fastGraphql: { served: number; declined: Record<string, string> };
    /** What GraphQL's answer cache did (src/graphql/answer-cache.ts); zeros while it is switched off. */
    graphqlAnswers: { hits: number; kept: number };
    /** How responses are compressed (src/http/rendering/compression.ts): for handlers that send files (the /docs and GraphiQL ones). */
    compression: Compression;
    /** Every route registered, by method and path template: the catalog's operations (and the HEAD Fastify adds to each GET). */
    servedRoutes: ReadonlyArray<{ method: string; url: string }>;
  }
  interface FastifyRequest {
    principal: Principal | null;
    bodyFormat: 'json' | 'form';
    /** performance.now() when authentication began (src/http/transport/auth-hooks.ts): Ctx.since; null before it. */
    arrivedAt: number | null;
  }
}

/** The HTTP application as the rest of Canon sees it; only src/http names Fastify. */
export type HttpApp = FastifyInstance;

export function sendError(reply: FastifyReply, err: AppError, cookies?: CookieNames): FastifyReply {
  const { status, headers, json } = errorResponse(err, String(reply.request.id), cookies);
  return reply.code(status).headers(headers).send(json);
}

/** Errors Node raises before Fastify sees a request (oversized headers, slow clients) get the same body and headers. */
const clientErrorHandler =
  (fixed: string) =>
  (err: NodeJS.ErrnoException, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const error =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new AppError('HEADERS_TOO_LARGE', 'The request headers are too large.')
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new AppError('REQUEST_TIMEOUT', 'The request did not arrive in time.')
          : new AppError('BAD_REQUEST', 'The request is not valid HTTP.');
    const id = randomUUID();
    const body = JSON.stringify(errorBody(error, id));
    const reason = error.status === 431 ? 'Request Header Fields Too Large' : error.status === 408 ? 'Request Timeout' : 'Bad Request';
    socket.end(
      `HTTP/1.1 ${error.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Cache-Control: no-store\r\nX-Request-Id: ${id}\r\n${fixed}Connection: close\r\n\r\n${body}`,
    );
  };

/** The first path segment when it names a version (`/v9/…`, `/v9`). */
const VERSION_SEGMENT = /^\/(v[0-9]+)(?:[/?]|$)/;

export async function buildHttpApp(deps: HttpDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const fixedHeaders = securityHeaders(config);
  const versionHeaders = new VersionHeaders(deps.model.versions, config.publicUrl);
  // Unversioned paths under the query, header and media-type strategies are rewritten to versioned routes before routing.
  const unversioned = new Set(deps.catalog.operations.filter((op) => !VERSION_SEGMENT.test(op.path)).map((op) => op.path.split('/', 2)[1]!));
  const selector = new VersionSelector(config.versioning, deps.model.versions, unversioned);
  const vary = selector.vary;
  const pinOf = async (req: IncomingMessage): Promise<string | undefined> =>
    (await deps.auth.authenticate({ headers: req.headers, cookies: {}, certificateSha256: verifiedCertificateSha256(req.socket) })).principal.apiVersion;
  const fast = new FastReads(deps, fixedHeaders);
  const fastLists = new FastLists(deps, fixedHeaders);
  const documents = new DocumentCache(deps);
  const fastDocuments = new FastDocuments(deps, documents, fixedHeaders['strict-transport-security']);
  const fastGraphql = new FastGraphql(deps, fixedHeaders);
  const app = Fastify({
    // Off: a pino child per request costs about a third of a GET; errors and (optionally) access
    // lines go through deps.log instead.
    logger: false,
    bodyLimit: config.bodyLimitBytes,
    routerOptions: { maxParamLength: 256, querystringParser: parseQuery },
    ...(selector.strategy === 'path' ? {} : { rewriteUrl: (req: IncomingMessage) => selector.rewrite(req) }),
    genReqId: requestIdFrom,
    trustProxy: config.trustProxy,
    // Timeouts are enforced by Node on the socket: headersTimeout for the head, requestTimeout for
    // head and body; connections are checked often enough that a slow client is cut off on time.
    serverFactory: (handler) => {
      const options = {
        headersTimeout: config.headersTimeoutMs,
        requestTimeout: config.requestTimeoutMs,
        keepAliveTimeout: config.keepAliveTimeoutMs,
        maxHeaderSize: config.maxHeaderBytes,
        connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.headersTimeoutMs / 4))),
        // guardFraming answers a missing Host in the uniform error shape; Node's own answer has no body.
        requireHostHeader: false,
      };
      const fastify = handler as (req: IncomingMessage, res: ServerResponse) => void;
      const lean = fastDocuments.listener(fast.listener(fastLists.listener(fastGraphql.listener(fastify))), fastify);
      // The date strategy routes a request that names no version by its credential's pin, read before routing.
      const h = selector.strategy === 'date' ? pinningListener(selector, pinOf, lean) : lean;
      if (!config.tls) return guardFraming(createServer(options), h, fixedHeaders);
      const { certFile, keyFile, clientCaFile } = config.tls;
      // With a client CA the server asks for a certificate but lets the handshake finish without a valid
      // one, so the client gets a 401 in the error body instead of a TLS alert; only verified ones count.
      return guardFraming(
        createHttpsServer({
          ...options,
          cert: readFileSync(certFile),
          key: readFileSync(keyFile),
          ...(clientCaFile ? { ca: readFileSync(clientCaFile), requestCert: true, rejectUnauthorized: false } : {}),
        }) as unknown as Server,
        h,
        fixedHeaders,
      );
    },
    clientErrorHandler: clientErrorHandler(rawHeaderLines(fixedHeaders)),
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id).headers(fixedHeaders);
      if (vary) reply.header('vary', vary);
      const code = (err as { code?: string }).code;
      sendError(reply, code === 'FST_ERR_MAX_PARAM_LENGTH' ? new AppError('URI_TOO_LONG', 'A path segment is too long.') : toAppError(err).error);
    },
  });
  // From here on every lifecycle hook is seen: the lean read path serves a route only if it stands in for all of its hooks.
  const hooks = new HookRegistry(app);
  app.decorate('fastReads', fast.stats);
  app.decorate('fastLists', fastLists.stats);
  app.decorate('fastDocuments', fastDocuments.stats);
  app.decorate('fastGraphql', fastGraphql.stats);
  app.decorate('graphqlAnswers', deps.graphql.answers?.stats ?? { hits: 0, kept: 0 });
  app.decorate('compression', Compression.of(config));
  app.addHook('preClose', async () => {
    fast.close();
    fastLists.close();
    fastDocuments.close();
    fastGraphql.close();
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('bodyFormat', 'json');
  app.decorateRequest('arrivedAt', null);

  const { catalog } = deps;
  // Every route the server has, for tests and diagnostics: the catalog's, and nothing else.
  const served: Array<{ method: string; url: string }> = [];
  app.decorate('servedRoutes', served);
  // The options of each object-read route as finally registered (after every onRoute hook), checked at ready.
  const reads = new Map<string, RouteOptions>();
  // The same for the collection routes the lean list path serves.
  const lists = new Map<string, RouteOptions>();
  let graphqlPost: RouteOptions | undefined;
  const readPaths = new Set(catalog.operations.filter((op) => op.kind === 'read').map((op) => op.path));
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    for (const method of methods) served.push({ method, url: route.url });
    if (readPaths.has(route.url) && methods.includes('GET')) reads.set(route.url, route);
    if (fastLists.serves(route.url) && methods.includes('GET')) lists.set(route.url, route);
    if (route.url === GRAPHQL_EXECUTE_PATH && methods.includes('POST')) graphqlPost = route;
  });
  app.addHook('onReady', async () => {
    for (const [template, route] of reads) {
      const refusal = hooks.refusal(route);
      if (refusal) fast.decline(template, refusal);
    }
    for (const [template, route] of lists) {
      const refusal = hooks.refusal(route);
      if (refusal) fastLists.decline(template, refusal);
    }
    const refusal = graphqlPost ? hooks.refusal(graphqlPost) : 'no POST /graphql route';
    if (refusal) fastGraphql.decline(refusal);
  });
  /**
   * A request no route serves: OPTIONS on a known path is 200 with Allow, another method there 405 with
   * Allow, any other path 404. Answered from onRequest, before a byte of the body is read or parsed, and
   * counted against the client's address: an anonymous client cannot make the server parse bodies for free.
   */
  const servedVersions = new Set(deps.model.versions.map((v) => v.name).reverse());
  const unsupported = (named: string): AppError =>
    new AppError('UNSUPPORTED_VERSION', `This server does not serve ${JSON.stringify(named.slice(0, 64))}.`, {
      details: [{ field: 'version', message: `must be one of ${[...servedVersions].join(', ')}`, value: named.slice(0, 64) }],
    });
  // `/events` is unversioned under every strategy: the request's named version, else the credential's pin.
  const eventVersion: EventVersion = (request, principal) => {
    const version = selector.forUnversioned(request.raw, request.query as Record<string, unknown>, principal.apiVersion);
    if (!version)
      throw unsupported(
        String(
          request.headers['x-api-version'] ??
            request.headers['canon-version'] ??
            (request.query as Record<string, unknown>).version ??
            (request.query as Record<string, unknown>).v ??
            request.headers.accept ??
            '',
        ),
      );
    return version;
  };
  const unmatched = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    await limitIp(deps, request, reply);
    const allow = catalog.allow(request.url);
    if (allow && request.method === 'OPTIONS') return reply.code(200).header('allow', allow).send();
    if (allow) throw new AppError('METHOD_NOT_ALLOWED', `${request.method} is not allowed here; use ${allow}.`, { headers: { allow } });
    // DESIGN §10: a version the server does not serve is 400, not 404 (named in the path, or by the strategy);
    // so is one named more than once in the query, the code two X-API-Version headers get (issue 26.11).
    const repeated = repeatedVersionOf(request.raw);
    if (repeated !== undefined)
      throw new AppError('UNSUPPORTED_VERSION', `The version is named more than once (${repeated}); name it once, with version or v.`, {
        details: [{ field: 'version', message: 'must be named once', value: repeated }],
      });
    const named = unsupportedVersionOf(request.raw) ?? (selector.strategy === 'path' ? VERSION_SEGMENT.exec(request.url)?.[1] : undefined);
    if (named !== undefined && !servedVersions.has(named)) throw unsupported(named);
    throw new AppError('ROUTE_NOT_FOUND', `No route matches ${request.method} ${request.originalUrl.split('?')[0]}.`);
  };

  // The lean path does what this hook does for the requests it takes (request id, fixed headers, URL length, Accept).
  await hooks.acknowledge(() => {
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id).headers(fixedHeaders);
      // The header or Accept that chose the version is part of the response's key (RFC 9110 §12.5.5).
      if (vary) reply.header('vary', vary);
      // The date strategy says which release it resolved (a date, a pin, or the current one).
      if (selector.strategy === 'date') {
        const date = selector.dateOf(request.url);
        if (date) reply.header('canon-version', date);
      }
      // Set first: every response of a deprecated version says so, errors and 304s included (DESIGN §10).
      const deprecated = versionHeaders.forUrl(request.url);
      if (deprecated) {
        reply.headers(deprecated.headers);
        if (config.versionSunset === 'enforce' && deps.now() >= deprecated.sunsetAt) throw sunsetError(deprecated);
      }
      if (request.url.length > config.maxUrlLength) throw new AppError('URI_TOO_LONG', `The request target is longer than ${config.maxUrlLength} characters.`);
      // /events also speaks text/event-stream (DESIGN §9); every other endpoint only JSON.
      // Documentation (/docs, its assets, the changelog, migration guides, GraphiQL's page and files) is HTML, Markdown, scripts, whatever the client asks for: not an API response.
      if (
        !acceptsJson(request.headers.accept) &&
        !(selector.strategy === 'media-type' && acceptsVendorJson(request.headers.accept)) &&
        !(request.routeOptions.url === EVENTS_PATH && wantsEventStream(request.headers.accept)) &&
        !(request.routeOptions.url === GRAPHQL_PATH && (acceptsGraphql(request.headers.accept) || wantsGraphiql(request))) &&
        !DOCUMENTATION_PATHS.has(request.routeOptions.url ?? '')
      )
        throw new AppError('NOT_ACCEPTABLE', 'This endpoint produces application/json; the Accept header does not allow it.');
      if (request.is404) return unmatched(request, reply);
      const malformed = (request.query as ParsedQuery)[MALFORMED];
      if (malformed) {
        throw new AppError('INVALID_QUERY', 'A query parameter is not well-formed text: percent-encoding must decode to UTF-8, without U+0000.', {
          details: malformed.map((field) => ({ field, message: 'is not well-formed percent-encoded UTF-8 text' })),
        });
      }
    });
  });

  app.setErrorHandler((err, request, reply) => {
    const { error, internal } = toAppError(err);
    // 5xx never leak internals to the client; the log keeps the cause, joined by the request id.
    if (internal) deps.log.error({ err, request_id: request.id, method: request.method, url: loggableUrl(request.url) }, 'unhandled error');
    const route = (request.routeOptions.config as { versionOf?: VersionOfRoute } | undefined)?.versionOf;
    return sendError(reply, route ? errorInVersion(error, route.version, route.resource) : error, deps.cookieNames);
  });

  if (config.accessLog) {
    // The lean path stands aside whenever access logging is on.
    await hooks.acknowledge(() => {
      app.addHook('onResponse', async (request, reply) => {
        deps.log.info(
          { request_id: request.id, method: request.method, url: loggableUrl(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
          'request',
        );
      });
    });
  }

  // onRequest answers every unmatched request first; this only stands behind it.
  app.setNotFoundHandler(unmatched);

  // The lean path checks the same pressure itself (watchPressure).
  await hooks.acknowledge(() => registerOverload(app, config));
  fast.watchPressure(() => app.isUnderPressure());
  fastLists.watchPressure(() => app.isUnderPressure());
  fastDocuments.watchPressure(() => app.isUnderPressure());
  fastGraphql.watchPressure(() => app.isUnderPressure());
  // Only under the media-type strategy, where the lean read path stands aside (src/http/transport/fast-reads.ts).
  if (selector.strategy === 'media-type')
    await hooks.acknowledge(() => {
      app.addHook('onSend', mediaTypeHook);
    });
  // The lean paths code their own responses the same way (src/http/transport/fast-reads.ts).
  await hooks.acknowledge(() => registerCompression(app, Compression.of(config)));
  registerBodyParsers(app, config);
  registerOperations(
    app,
    catalog,
    {
      ...serviceHandlers(deps, metricsGuard(deps)),
      ...oauthHandlers(deps),
      ...sessionHandlers(deps),
      ...eventHandlers(deps, deps.events, eventVersion),
      ...guideHandlers(deps),
      ...docsHandlers(deps),
      ...openApiHandlers(deps, documents),
      ...graphqlHandlers(deps),
    },
    resourceRoutes(deps),
    (op, spec) => {
      // An object read's own hook is the authentication the lean path performs itself; so is a top-level list's for the lean list path.
      // So are GraphQL's own (authentication, CSRF, which a request without cookies never needs) for the lean GraphQL path.
      if (op.kind === 'read' || (op.kind === 'list' && fastLists.serves(op.path)) || op.id === 'graphql.execute') hooks.acknowledgeRoute(spec);
    },
  );
  return app;
}
