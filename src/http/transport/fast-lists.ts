// A lean path for top-level collection pages, GET /<version>/<resource>?<query>: the Fastify list route's status, headers and bytes, minus the framework's per-request cost.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { versionOf } from '../../model/compile.js';
import type { Principal } from '../../model/principal.js';
import { grantFor, none } from '../../services/permissions.js';
import { errorInVersion } from '../../query/versioned-query.js';
import type { HttpDeps } from '../deps.js';
import { OBJECT_CACHE_CONTROL } from '../rendering/conditional.js';
import { JSON_CONTENT_TYPE } from './negotiate.js';
import { renderList, withPageLink, type RenderedList } from '../rendering/list-response.js';
import { toAppError } from '../rendering/error-body.js';
import { varyWithAcceptEncoding } from '../rendering/compression.js';
import { representationOf } from './compress-hook.js';
import { MALFORMED, parseQuery, type ParsedQuery } from './query-string.js';
import { leanGetUrl, pastEnforcedSunset } from './lean-request.js';
import { LeanPath, type LeanTarget } from './lean-path.js';
import { writeLeanError } from './lean-error.js';
import { requestIdFrom } from './request-id.js';
import { deprecatedOf } from '../versioning/version-headers.js';

/** A request this path takes: the collection it names, its URL and its query as Fastify's parser gives it. */
interface ListCall {
  target: LeanTarget;
  url: string;
  query: ParsedQuery;
}

/**
 * Serves `GET /<version>/<resource>?<query>` (a top-level collection, path versioning) itself and hands every other
 * request, and every one it cannot answer exactly as the Fastify list route would, to `next`. As FastReads
 * (fast-reads.ts), it never half-handles one: nothing with side effects happens before authentication succeeds, so a
 * request it gives up on runs in Fastify from the start. Why it exists: measured in bench/uncached.mjs, Fastify's
 * request and reply objects, hook chain and onSend hooks were a seventh of an uncached page's CPU (its profile split).
 */
export class FastLists extends LeanPath<ListCall> {
  /** Requests answered here (not by Fastify), and the routes it declined to take and why: lets tests prove which path answered. */
  readonly stats: { served: number; declined: Record<string, string> } = { served: 0, declined: {} };

  /** `fixed`: the headers every response carries (src/http/transport/security-headers.ts). */
  constructor(deps: HttpDeps, fixed: Record<string, string>) {
    super(deps, fixed);
    // Under the other strategies requests name their version outside the path, which Fastify's rewrite reads;
    // a nested collection's parent is checked by its own handler, which this path does not stand in for.
    if (deps.config.versioning !== 'path') this.stats.declined['*'] = `CANON_VERSIONING=${deps.config.versioning}`;
    for (const op of deps.catalog.operations) {
      if (op.kind !== 'list' || op.parent || op.path.includes(':') || deps.config.versioning !== 'path') continue;
      const version = versionOf(deps.model, op.version!)!;
      this.targets.set(op.path, { version, resource: deps.model.resources.get(op.resource!)!, deprecated: deprecatedOf(version, deps.config.publicUrl) });
    }
  }

  /** Whether `template` is a collection this path serves: its Fastify route's hooks are then checked at ready. */
  serves(template: string): boolean {
    return this.targets.has(template);
  }

  /** Stops serving `template` (`/v2/products`): a hook runs on its Fastify route that this path does not stand in for (hook-registry.ts). */
  decline(template: string, reason: string): void {
    if (this.targets.delete(template)) this.stats.declined[template] = reason;
  }

  protected match(req: IncomingMessage): ListCall | undefined {
    const url = this.open ? leanGetUrl(this.deps, req) : undefined;
    if (url === undefined) return undefined;
    // Fastify's router splits at the first `?` (or `#`); a path with `#`, `%`, a trailing slash or other case is no key
    // here and goes to the router, which decides what it means.
    const at = url.indexOf('?');
    const target = this.targets.get(at < 0 ? url : url.slice(0, at));
    if (target === undefined || this.underPressure() || pastEnforcedSunset(this.deps, target.deprecated)) return undefined;
    // The parser Fastify is configured with (app.ts), on the text its router hands it; a parameter that is not
    // well-formed text is refused by Fastify's onRequest before authentication, so it is Fastify's to answer.
    const query = parseQuery(at < 0 ? '' : url.slice(at + 1));
    if (query[MALFORMED] !== undefined) return undefined;
    return { target, url, query };
  }

  /** Counts, limits, renders and sends, in the order the Fastify route's hook and handler do (auth-hooks.ts authHook). */
  protected respond({ target, url, query }: ListCall, principal: Principal, _waited: boolean, req: IncomingMessage, res: ServerResponse, arrived: number): void {
    const { deps } = this;
    const requestId = requestIdFrom(req);
    const headers = this.headersFor(target, requestId);
    const fail = (err: unknown): void => this.fail(target, res, headers, requestId, err, req);
    this.counted(
      target,
      principal,
      headers,
      () => {
        const canCreate = !none(grantFor(principal, target.resource.def.permissions.create));
        const ctx = { principal, format: 'json' as const, since: arrived };
        renderList(deps, target.version, target.resource, { url, originalUrl: url, query, ctx, parent: undefined, canCreate })
          .then((page) => this.send(res, headers, page, req))
          .catch(fail);
      },
      fail,
    );
  }

  /** As the route's handler sends it through sendRepresentation (compress-hook.ts): validators first, then the coding. */
  private send(res: ServerResponse, headers: Record<string, string>, page: RenderedList, req: IncomingMessage): void {
    const { compression } = this;
    const chosen = representationOf(compression, req.headers['accept-encoding'], req.headers['if-none-match'], {
      body: page.json,
      etag: page.etag,
      contentType: JSON_CONTENT_TYPE,
    });
    headers['cache-control'] = OBJECT_CACHE_CONTROL;
    if (page.link !== undefined) headers.link = withPageLink(headers.link, page.link);
    headers.etag = chosen.etag;
    if (compression.enabled) headers.vary = varyWithAcceptEncoding(headers.vary);
    if (chosen.notModified) {
      res.writeHead(304, headers);
      res.end();
    } else {
      const body = chosen.coding === 'identity' ? page.json : compression.encode(page.json, chosen.coding, true);
      headers['content-type'] = JSON_CONTENT_TYPE;
      if (chosen.coding !== 'identity') headers['content-encoding'] = chosen.coding;
      headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.length);
      res.writeHead(200, headers);
      res.end(body);
    }
    this.stats.served++;
  }

  /** The error body exactly as the Fastify error handler sends it, an older version's field names restored (DESIGN §5). */
  private fail(target: LeanTarget, res: ServerResponse, headers: Record<string, string>, requestId: string, err: unknown, req: IncomingMessage): void {
    let shown = err;
    if (target.version.newer) {
      const { error, internal } = toAppError(err);
      if (!internal) shown = errorInVersion(error, target.version, target.resource.name);
    }
    if (writeLeanError(this.deps, req, res, headers, requestId, shown)) this.stats.served++;
  }
}
