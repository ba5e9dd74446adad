// A lean path for the hottest request, GET of one object by id: the same services, headers and bodies as the Fastify route, minus the framework's per-request cost.
import { UUID_PATTERN as UUID } from '../../lib/uuid.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledResource } from '../../model/compile.js';
import type { ApiVersion } from '../../model/versions.js';
import { versionOf } from '../../model/compile.js';
import { rateLimited, setRateHeaders, type Verdict } from '../../limits/rate-limiter.js';
import type { Credentials } from '../../auth/authenticator.js';
import type { Principal } from '../../model/principal.js';
import type { HttpDeps } from '../deps.js';
import { verifiedCertificateSha256 } from './auth-hooks.js';
import { OBJECT_CACHE_CONTROL } from '../rendering/conditional.js';
import { JSON_CONTENT_TYPE } from './negotiate.js';
import { leanGetUrl, pastEnforcedSunset } from './lean-request.js';
import { readObject, readObjectNow, type ObjectRead, type ObjectRequest } from '../rendering/object-body.js';
import { writeLeanError } from './lean-error.js';
import { requestIdFrom } from './request-id.js';
import { deprecatedOf, type Deprecated } from '../versioning/version-headers.js';
import { countVersion } from '../versioning/version-usage.js';
import { Compression } from '../rendering/compression.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

interface Target {
  version: ApiVersion;
  resource: CompiledResource;
  /** Deprecation, Sunset and Link when the version is deprecated, and its sunset (src/http/versioning/version-headers.ts). */
  deprecated: Deprecated | undefined;
}

/** A request this path takes: what it names, and the object's id (lower case, as stored). */
interface Read {
  target: Target;
  id: string;
}

/**
 * Serves `GET /<version>/<resource>/<uuid>` (no query, no cookies) itself and hands every other request,
 * and every request it cannot answer exactly as the Fastify route would, to Fastify. It never half-handles
 * one: until it has authenticated the caller it has done nothing with side effects, so a request it gives
 * up on (an authentication failure, which Fastify counts against the IP and answers) runs there from the
 * start. Why it exists: measured in bench/get-by-id.mjs, Fastify's request and reply objects, hook chain
 * and serializer cost more than all of Canon's own work on this path (docs/BENCHMARKS.md).
 */
export class FastReads {
  /**
   * Requests answered here (not by Fastify); `immediate`, those of them answered within the call that received
   * them (see respond); and the routes it declined to take and why: lets tests prove which path answered.
   */
  readonly stats: { served: number; immediate: number; declined: Record<string, string> } = { served: 0, immediate: 0, declined: {} };
  private readonly targets = new Map<string, Target>();
  private open = true;
  private underPressure: () => boolean = () => false;

  /** Strict-Transport-Security, when every response carries it (src/http/transport/security-headers.ts). */
  private readonly hsts: string | undefined;
  /** The coding of each response, as the Fastify route chooses it (src/http/rendering/compression.ts). */
  private readonly compression: Compression;

  /** `fixed`: the headers every response carries (src/http/transport/security-headers.ts). */
  constructor(
    private readonly deps: HttpDeps,
    fixed: Record<string, string>,
  ) {
    this.hsts = fixed['strict-transport-security'];
    this.compression = Compression.of(deps.config);
    // The catalog's object reads: `/v2/products/:id` is served here as `/v2/products/<uuid>`.
    // Under the other strategies requests name their version outside the path, which Fastify's rewrite reads.
    if (deps.config.versioning !== 'path') this.stats.declined['*'] = `CANON_VERSIONING=${deps.config.versioning}`;
    for (const op of deps.catalog.operations) {
      if (op.kind !== 'read' || deps.config.versioning !== 'path') continue;
      const version = versionOf(deps.model, op.version!)!;
      this.targets.set(op.path.slice(0, -':id'.length), {
        version,
        resource: deps.model.resources.get(op.resource!)!,
        deprecated: deprecatedOf(version, deps.config.publicUrl),
      });
    }
  }

  /**
   * Stops serving `template` (`/v2/products/:id`): a hook runs on its Fastify route that this path does
   * not stand in for (src/http/transport/hook-registry.ts), so only Fastify may answer it.
   */
  decline(template: string, reason: string): void {
    if (this.targets.delete(template.slice(0, -':id'.length))) this.stats.declined[template] = reason;
  }

  /** The overload check (DESIGN §11), known once the overload plugin is registered. */
  watchPressure(underPressure: () => boolean): void {
    this.underPressure = underPressure;
  }

  /** From shutdown on, Fastify answers everything (it refuses new requests while closing). */
  close(): void {
    this.open = false;
  }

  /** The server's request listener: this path when it applies, else Fastify's. */
  listener(fastify: Listener): Listener {
    return (req, res) => {
      const read = this.match(req);
      if (read === undefined) {
        fastify(req, res);
        return;
      }
      // The request's arrival, before any store read: a read sent after it may vouch for a kept record
      // (ResourceService.getNow). Taken only for requests this path serves; Fastify's auth hook takes its own.
      const arrived = performance.now();
      const credentials: Credentials = { headers: req.headers, cookies: {}, certificateSha256: verifiedCertificateSha256(req.socket) };
      const known = this.deps.auth.authenticatedNow(credentials);
      if (known !== undefined) this.respond(read, known.principal, false, req, res, arrived);
      else void this.authenticateThenRespond(read, credentials, req, res, fastify, arrived);
    };
  }

  private match(req: IncomingMessage): Read | undefined {
    const url = this.open ? leanGetUrl(this.deps, req) : undefined;
    if (url === undefined) return undefined;
    const slash = url.lastIndexOf('/');
    const id = url.slice(slash + 1);
    // The id must be a bare UUID: anything else (a query, an encoded character, a trailing slash) goes to the router.
    if (!UUID.test(id)) return undefined;
    const target = this.targets.get(url.slice(0, slash + 1));
    if (target === undefined || this.underPressure()) return undefined;
    if (pastEnforcedSunset(this.deps, target.deprecated)) return undefined;
    return { target, id: id.toLowerCase() };
  }

  /** Authentication that has to wait (a key not yet cached, a bearer token). */
  private async authenticateThenRespond(read: Read, credentials: Credentials, req: IncomingMessage, res: ServerResponse, fastify: Listener, arrived: number): Promise<void> {
    let principal: Principal;
    try {
      principal = (await this.deps.auth.authenticate(credentials)).principal;
    } catch {
      // Nothing has happened yet: Fastify authenticates again, counts the failure against the IP and answers.
      fastify(req, res);
      return;
    }
    this.respond(read, principal, true, req, res, arrived);
  }

  /**
   * Answers an authenticated read. When the rate-limit counter and the record are both in memory (the common case:
   * a warm key, the embedded counter, a record read since the last commit) it finishes in this call, with no promise
   * or microtask between the request and the write: measured, those hops cost a fifth of this path (docs/BENCHMARKS.md).
   * Otherwise it goes on once the counter (Redis) or the record (a store read) answers. `waited`: authentication did.
   */
  private respond({ target, id }: Read, principal: Principal, waited: boolean, req: IncomingMessage, res: ServerResponse, arrived: number): void {
    const { deps } = this;
    const requestId = requestIdFrom(req);
    // A literal, not a spread of the fixed headers: V8 gives a spread object a slow shape, and every
    // header added after it (and the write) paid for that, a quarter of this path's cost (measured).
    const headers: Record<string, string> = { 'x-content-type-options': 'nosniff', 'x-request-id': requestId };
    if (this.hsts !== undefined) headers['strict-transport-security'] = this.hsts;
    if (target.deprecated) Object.assign(headers, target.deprecated.headers);
    const fail = (err: unknown): void => this.fail(res, headers, requestId, err, req);
    const send = (body: ObjectRead): void => this.send(res, headers, body);
    const withinLimits = (verdict: Verdict | undefined): void => {
      if (verdict !== undefined) {
        setRateHeaders(headers, verdict.shown);
        if (verdict.refused) throw rateLimited(verdict);
      }
      const q: ObjectRequest = {
        version: target.version,
        resource: target.resource,
        principal,
        id,
        ifNoneMatch: req.headers['if-none-match'],
        ifModifiedSince: req.headers['if-modified-since'],
        acceptEncoding: req.headers['accept-encoding'],
        compression: this.compression,
        since: arrived,
      };
      const now = readObjectNow(deps.services, q);
      if (now === undefined) {
        readObject(deps.services, q).then(send).catch(fail);
        return;
      }
      send(now);
    };
    try {
      // As the route's hook counts it (auth-hooks.ts authHook): once authenticated, before the rate limit, so a
      // refused read counts for its version too.
      countVersion(deps, target.version, principal);
      const verdict = deps.limiter.limits.enabled ? deps.limiter.forPrincipal(principal) : undefined;
      if (verdict instanceof Promise) verdict.then(withinLimits).catch(fail);
      else withinLimits(verdict);
    } catch (err) {
      fail(err);
    }
    if (!waited && res.writableEnded) this.stats.immediate++;
  }

  private send(res: ServerResponse, headers: Record<string, string>, body: ObjectRead): void {
    headers.etag = body.etag;
    headers['last-modified'] = body.lastModified;
    headers['cache-control'] = OBJECT_CACHE_CONTROL;
    // As src/http/transport/compress-hook.ts sends it: the same URL answers other bytes to another Accept-Encoding.
    if (this.compression.enabled) headers.vary = 'Accept-Encoding';
    if (body.notModified) {
      res.writeHead(304, headers);
      res.end();
    } else if (body.coding === 'identity') {
      headers['content-type'] = JSON_CONTENT_TYPE;
      headers['content-length'] = String(Buffer.byteLength(body.json));
      res.writeHead(200, headers);
      res.end(body.json);
    } else {
      const bytes = this.compression.encode(body.json, body.coding, true);
      headers['content-type'] = JSON_CONTENT_TYPE;
      headers['content-encoding'] = body.coding;
      headers['content-length'] = String(bytes.length);
      res.writeHead(200, headers);
      res.end(bytes);
    }
    this.stats.served++;
  }

  /** The error body exactly as the Fastify error handler sends it (DESIGN §5). */
  private fail(res: ServerResponse, headers: Record<string, string>, requestId: string, err: unknown, req: IncomingMessage): void {
    if (writeLeanError(this.deps, req, res, headers, requestId, err)) this.stats.served++;
  }
}
