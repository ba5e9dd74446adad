// The operator server of a `canon worker` (DESIGN §9: `canon worker --port P` serves /healthz, /readyz and /metrics on P): the API's own handlers, nothing else.
import Fastify from 'fastify';
import { AppError } from '../../errors/app-error.js';
import type { HttpDeps } from '../deps.js';
import { errorResponse, toAppError } from '../rendering/error-body.js';
import { requestIdFrom } from './request-id.js';
import { serviceHandlers } from '../routes/service-routes.js';

export interface OperatorServerOptions {
  host: string;
  /** 0: a free port, chosen by the system (the URL says which). */
  port: number;
  readiness: HttpDeps['readiness'];
  metrics: HttpDeps['metrics'];
  log: HttpDeps['log'];
}

export interface OperatorServer {
  /** Where it listens: `http://host:port`. */
  url: string;
  close(): Promise<void>;
}

/** The paths served, as the API's catalog names them (src/catalog/platform-operations.ts). */
const ROUTES = { '/healthz': 'health.live', '/readyz': 'health.ready', '/metrics': 'metrics' } as const;

/**
 * An operator address, for orchestrators and Prometheus on the worker's host: no credentials (bind it where only
 * they reach, 127.0.0.1 by default; docs/configuration.md), no body parsing, no rate limit. Answers, and errors,
 * are those of the API's same paths: its handlers (src/http/routes/service-routes.ts), the DESIGN §5 error body, and
 * X-Request-Id. Any other path is 404 ROUTE_NOT_FOUND, another method on these 405 with Allow.
 */
export async function startOperatorServer(options: OperatorServerOptions): Promise<OperatorServer> {
  const app = Fastify({ logger: false, genReqId: requestIdFrom, bodyLimit: 1024 });
  const handlers = serviceHandlers({ readiness: options.readiness, metrics: options.metrics });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
  });
  for (const [url, id] of Object.entries(ROUTES)) app.route({ ...handlers[id]!, method: 'GET', url });
  app.setNotFoundHandler(async (request) => {
    const path = request.url.split('?')[0]!;
    if (path in ROUTES) throw new AppError('METHOD_NOT_ALLOWED', `${request.method} is not allowed here; use GET, HEAD.`, { headers: { allow: 'GET, HEAD' } });
    throw new AppError('ROUTE_NOT_FOUND', `No route matches ${request.method} ${path}; this worker serves /healthz, /readyz and /metrics.`);
  });
  app.setErrorHandler((err, request, reply) => {
    const { error, internal } = toAppError(err);
    if (internal) options.log.error({ err, request_id: request.id }, 'unhandled error on the worker’s operator server');
    const { status, headers, json } = errorResponse(error, String(request.id));
    return reply.code(status).headers(headers).send(json);
  });
  const url = await app.listen({ host: options.host, port: options.port });
  return { url, close: () => app.close() };
}
