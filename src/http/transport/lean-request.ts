// What the lean GET paths (fast-reads.ts, fast-lists.ts) ask of a request before taking it: that Fastify's app-wide onRequest hook would only add headers to it.
import type { IncomingMessage } from 'node:http';
import type { HttpDeps } from '../deps.js';
import type { Deprecated } from '../versioning/version-headers.js';
import { acceptsJson } from './negotiate.js';

/**
 * The request's URL when a lean path may consider it: a GET, the access log off (its onResponse line is Fastify's),
 * no cookies (they may carry a session: renewal, CSRF bookkeeping), a URL within the length limit and an Accept that
 * allows JSON (else Fastify's onRequest answers 414 or 406). Undefined otherwise: Fastify takes it from the start.
 */
export function leanGetUrl(deps: HttpDeps, req: IncomingMessage): string | undefined {
  const url = req.url;
  if (req.method !== 'GET' || url === undefined || deps.config.accessLog) return undefined;
  const h = req.headers;
  if (h.cookie !== undefined || url.length > deps.config.maxUrlLength) return undefined;
  if (h.accept !== undefined && !acceptsJson(h.accept)) return undefined;
  return url;
}

/** A version past its enforced sunset: Fastify's onRequest refuses it (410), with every other refusal. */
export function pastEnforcedSunset(deps: HttpDeps, deprecated: Deprecated | undefined): boolean {
  return deprecated !== undefined && deps.config.versionSunset === 'enforce' && deps.now() >= deprecated.sunsetAt;
}
