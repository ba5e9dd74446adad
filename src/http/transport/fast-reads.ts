// A lean path for the hottest request, GET of one object by id: the same services, headers and bodies as the Fastify route, minus the framework's per-request cost.
import { UUID_PATTERN as UUID } from '../../lib/uuid.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { versionOf } from '../../model/compile.js';
import type { Principal } from '../../model/principal.js';
import type { HttpDeps } from '../deps.js';
import { OBJECT_CACHE_CONTROL } from '../rendering/conditional.js';
import { JSON_CONTENT_TYPE } from './negotiate.js';
import { leanGetUrl, pastEnforcedSunset } from './lean-request.js';
import { LeanPath, type LeanTarget } from './lean-path.js';
import { readObject, readObjectNow, type ObjectRead, type ObjectRequest } from '../rendering/object-body.js';
import { writeLeanError } from './lean-error.js';
import { requestIdFrom } from './request-id.js';
import { deprecatedOf } from '../versioning/version-headers.js';

/** A request this path takes: what it names, and the object's id (lower case, as stored). */
interface Read {
  target: LeanTarget;
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
export class FastReads extends LeanPath<Read> {
  /**
   * Requests answered here (not by Fastify); `immediate`, those of them answered within the call that received
   * them (see respond); and the routes it declined to take and why: lets tests prove which path answered.
   */
  readonly stats: { served: number; immediate: number; declined: Record<string, string> } = { served: 0, immediate: 0, declined: {} };

  /** `fixed`: the headers every response carries (src/http/transport/security-headers.ts). */
  constructor(deps: HttpDeps, fixed: Record<string, string>) {
    super(deps, fixed);
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

  protected match(req: IncomingMessage): Read | undefined {
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

  /**
   * Answers an authenticated read. When the rate-limit counter and the record are both in memory (the common case:
   * a warm key, the embedded counter, a record read since the last commit) it finishes in this call, with no promise
   * or microtask between the request and the write: measured, those hops cost a fifth of this path (docs/BENCHMARKS.md).
   * Otherwise it goes on once the counter (Redis) or the record (a store read) answers. `waited`: authentication did.
   */
  protected respond({ target, id }: Read, principal: Principal, waited: boolean, req: IncomingMessage, res: ServerResponse, arrived: number): void {
    const { deps } = this;
    const requestId = requestIdFrom(req);
    const headers = this.headersFor(target, requestId);
    const fail = (err: unknown): void => this.fail(res, headers, requestId, err, req);
    const send = (body: ObjectRead): void => this.send(res, headers, body);
    this.counted(
      target,
      principal,
      headers,
      () => {
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
        if (now === undefined) readObject(deps.services, q).then(send).catch(fail);
        else send(now);
      },
      fail,
    );
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
