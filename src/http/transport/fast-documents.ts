// The lean path for the OpenAPI documents (issue 27: served about as cheaply as a GET by id): GET /vN/openapi.json answered before Fastify, with exactly the route's headers and limits.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setRateHeaders, type Verdict } from '../../limits/rate-limiter.js';
import { ifNoneMatchHits } from '../rendering/conditional.js';
import type { HttpDeps } from '../deps.js';
import type { DocumentCache } from '../rendering/document-cache.js';
import { documentHeaders } from '../routes/openapi-routes.js';
import { choose } from '../rendering/precompressed.js';
import { requestIdFrom } from './request-id.js';
import { deprecatedOf, type Deprecated } from '../versioning/version-headers.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

interface Target {
  version: string;
  deprecated: Deprecated | undefined;
}

/**
 * Takes only what it can answer exactly as the route would: the path strategy, no proxy to trust (the client
 * address is the socket's, as Fastify's `request.ip` is then), no access log, the exact path (no query), a
 * version not past an enforced sunset, and an address within its limit; anything else goes to Fastify, which
 * answers it (a 429 included). `stats.served` lets tests prove which path answered.
 */
export class FastDocuments {
  readonly stats = { served: 0 };
  private readonly targets = new Map<string, Target>();
  private open = true;
  private underPressure: () => boolean = () => false;

  constructor(
    private readonly deps: HttpDeps,
    private readonly documents: DocumentCache,
    /** Strict-Transport-Security, when every response carries it. */
    private readonly hsts: string | undefined,
  ) {
    const { config } = deps;
    if (config.versioning !== 'path' || config.trustProxy !== false || config.accessLog) return;
    for (const v of deps.model.versions) this.targets.set(`/${v.name}/openapi.json`, { version: v.name, deprecated: deprecatedOf(v, config.publicUrl) });
  }

  /** The overload check (DESIGN §11), known once the overload plugin is registered. */
  watchPressure(underPressure: () => boolean): void {
    this.underPressure = underPressure;
  }

  /** From shutdown on, Fastify answers everything (it refuses new requests while closing). */
  close(): void {
    this.open = false;
  }

  /** The server's request listener: this path for a document, else `next` (the lean read path, then Fastify). */
  listener(next: Listener, fastify: Listener): Listener {
    return (req, res) => {
      if (!this.take(req, res, fastify)) next(req, res);
    };
  }

  /** Whether this path answered (or will answer) the request; false: someone else's turn. */
  private take(req: IncomingMessage, res: ServerResponse, fastify: Listener): boolean {
    if (req.method !== 'GET' || req.url === undefined || !this.open || this.targets.size === 0) return false;
    const target = this.targets.get(req.url);
    if (target === undefined || this.underPressure()) return false;
    if (target.deprecated && this.deps.config.versionSunset === 'enforce' && this.deps.now() >= target.deprecated.sunsetAt) return false;
    const { limiter } = this.deps;
    if (!limiter.limits.enabled) {
      this.send(target, undefined, req, res);
      return true;
    }
    const verdict = limiter.forIp(req.socket.remoteAddress ?? '');
    const go = (v: Verdict): void => (v.refused ? fastify(req, res) : this.send(target, v, req, res));
    if (verdict instanceof Promise) verdict.then(go, () => fastify(req, res));
    else go(verdict);
    return true;
  }

  private send(target: Target, verdict: Verdict | undefined, req: IncomingMessage, res: ServerResponse): void {
    const accept = req.headers['accept-encoding'];
    const chosen = choose(this.documents.of(target.version), typeof accept === 'string' ? accept : undefined);
    const headers: Record<string, string> = { 'x-request-id': requestIdFrom(req), 'x-content-type-options': 'nosniff' };
    if (this.hsts !== undefined) headers['strict-transport-security'] = this.hsts;
    if (target.deprecated) Object.assign(headers, target.deprecated.headers);
    if (verdict !== undefined) setRateHeaders(headers, verdict.shown);
    Object.assign(headers, documentHeaders(chosen.etag, undefined));
    const ifNoneMatch = req.headers['if-none-match'];
    if (typeof ifNoneMatch === 'string' && ifNoneMatchHits(ifNoneMatch, chosen.etag)) {
      res.writeHead(304, headers);
      res.end();
    } else {
      if (chosen.coding !== 'identity') headers['content-encoding'] = chosen.coding;
      headers['content-type'] = 'application/json; charset=utf-8';
      headers['content-length'] = String(chosen.bytes.length);
      res.writeHead(200, headers);
      res.end(chosen.bytes);
    }
    this.stats.served++;
  }
}
