// The operator's metrics address (CANON_METRICS_LISTEN): a plain node:http listener answering `GET /metrics` and nothing else, without credentials.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config, ListenAddress } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';
import { rateHeaders, rateLimited, type Verdict } from '../../limits/rate-limiter.js';
import { errorResponse } from '../rendering/error-body.js';
import { securityHeaders } from './security-headers.js';

/** What a metrics endpoint reads: the process's registry (src/lib/metrics.ts). */
export interface MetricsText {
  text(): Promise<string>;
  contentType: string;
}

export const METRICS_PATH = '/metrics';

/**
 * Answers a request for the metrics on an operator's address (this listener, or a worker's `--port`): `GET` or
 * `HEAD /metrics` (any query) is the registry's text; `/metrics` with another method 405, any other path 404, in
 * the error body every Canon answer has. `limit` counts the request first (per client address: there is no
 * principal here); a refusal is 429 with Retry-After, as on the main listener.
 */
export async function answerMetrics(
  metrics: MetricsText,
  req: IncomingMessage,
  res: ServerResponse,
  options: { fixedHeaders?: Record<string, string>; limit?: (ip: string) => Verdict | Promise<Verdict>; log?: Pick<Logger, 'error'> } = {},
): Promise<void> {
  const id = randomUUID();
  const headers: Record<string, string | string[]> = { ...options.fixedHeaders, 'x-request-id': id };
  const fail = (err: AppError): void => {
    const answer = errorResponse(err, id);
    res.writeHead(answer.status, { ...headers, ...answer.headers }).end(req.method === 'HEAD' ? undefined : answer.json);
  };
  try {
    if (options.limit) {
      const verdict = await options.limit(req.socket.remoteAddress ?? '');
      Object.assign(headers, rateHeaders(verdict.shown));
      if (verdict.refused) return fail(rateLimited(verdict));
    }
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== METRICS_PATH) return fail(new AppError('ROUTE_NOT_FOUND', `No route matches ${req.method} ${path!.slice(0, 256)}; this address serves only GET ${METRICS_PATH}.`));
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return fail(new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use GET, HEAD.`, { headers: { allow: 'GET, HEAD' } }));
    const text = await metrics.text();
    res
      .writeHead(200, { ...headers, 'content-type': metrics.contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) })
      .end(req.method === 'HEAD' ? undefined : text);
  } catch (err) {
    options.log?.error({ err, request_id: id }, 'metrics listener failure');
    if (!res.headersSent) fail(new AppError('INTERNAL_ERROR', 'The metrics could not be read.'));
    else res.destroy();
  }
}

export interface MetricsListener {
  /** `http://host:port`, the address actually bound (port 0 picks one). */
  url: string;
  close(): Promise<void>;
}

/**
 * Listens on `address` for the metrics alone. Plain HTTP and no credentials: it is meant for a loopback or private
 * interface a scraper reaches (docs/configuration.md). Node's socket timeouts bound slow clients as on the main
 * listener, and every request is counted against its address by `limit`.
 */
export async function startMetricsListener(
  metrics: MetricsText,
  address: ListenAddress,
  config: Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs' | 'maxHeaderBytes' | 'hsts' | 'production' | 'tls'>,
  options: { limit?: (ip: string) => Verdict | Promise<Verdict>; log?: Pick<Logger, 'error'> } = {},
): Promise<MetricsListener> {
  const fixedHeaders = securityHeaders(config);
  const server: Server = createServer(
    { headersTimeout: config.headersTimeoutMs, requestTimeout: config.requestTimeoutMs, keepAliveTimeout: config.keepAliveTimeoutMs, maxHeaderSize: config.maxHeaderBytes },
    (req, res) => void answerMetrics(metrics, req, res, { fixedHeaders, ...options }),
  );
  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException): void =>
      reject(new Error(`CANON_METRICS_LISTEN: cannot listen on ${address.host}:${address.port}: ${err.code ?? err.message}`, { cause: err }));
    server.once('error', failed);
    server.listen(address.port, address.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  return {
    url: `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
