// What the lean GET paths (fast-reads.ts, fast-lists.ts) have in common: the routes they stand in for, the headers every answer carries, their listener, and when they stand down.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledResource } from '../../model/compile.js';
import type { Principal } from '../../model/principal.js';
import type { ApiVersion } from '../../model/versions.js';
import type { HttpDeps } from '../deps.js';
import { rateLimited, setRateHeaders, type Verdict } from '../../limits/rate-limiter.js';
import { countVersion } from '../versioning/version-usage.js';
import { Compression } from '../rendering/compression.js';
import type { Deprecated } from '../versioning/version-headers.js';
import { leanListener, type Listener } from './lean-request.js';

/** A route a lean path stands in for: its version and resource. */
export interface LeanTarget {
  version: ApiVersion;
  resource: CompiledResource;
  /** Deprecation, Sunset and Link when the version is deprecated, and its sunset (src/http/versioning/version-headers.ts). */
  deprecated: Deprecated | undefined;
}

/**
 * A lean path takes the requests `match` picks and answers them with `respond`, exactly as their Fastify route would;
 * every other request, and every one whose caller fails authentication, goes to the next listener (lean-request.ts).
 */
export abstract class LeanPath<T> {
  protected readonly targets = new Map<string, LeanTarget>();
  protected open = true;
  protected underPressure: () => boolean = () => false;
  /** Strict-Transport-Security, when every response carries it (src/http/transport/security-headers.ts). */
  protected readonly hsts: string | undefined;
  /** The coding of each response, as the Fastify route chooses it (src/http/rendering/compression.ts). */
  protected readonly compression: Compression;

  /** `fixed`: the headers every response carries (src/http/transport/security-headers.ts). */
  constructor(
    protected readonly deps: HttpDeps,
    fixed: Record<string, string>,
  ) {
    this.hsts = fixed['strict-transport-security'];
    this.compression = Compression.of(deps.config);
  }

  /** The overload check (DESIGN §11), known once the overload plugin is registered. */
  watchPressure(underPressure: () => boolean): void {
    this.underPressure = underPressure;
  }

  /** From shutdown on, Fastify answers everything (it refuses new requests while closing). */
  close(): void {
    this.open = false;
  }

  /** The server's request listener: this path when it applies, else `next`. */
  listener(next: Listener): Listener {
    return leanListener(
      this.deps,
      (req) => this.match(req),
      (taken, principal, req, res, arrived, waited) => this.respond(taken, principal, waited, req, res, arrived),
      next,
    );
  }

  /**
   * The headers every answer to `target` starts from. A literal, not a spread of the fixed headers: V8 gives a spread
   * object a slow shape, and every header added after it (and the write) paid for that, a quarter of the by-id
   * path's cost (measured).
   */
  protected headersFor(target: LeanTarget, requestId: string): Record<string, string> {
    const headers: Record<string, string> = { 'x-content-type-options': 'nosniff', 'x-request-id': requestId };
    if (this.hsts !== undefined) headers['strict-transport-security'] = this.hsts;
    if (target.deprecated) Object.assign(headers, target.deprecated.headers);
    return headers;
  }

  /**
   * As the route's auth hook does once the caller is authenticated (auth-hooks.ts authHook): counts the request for
   * its version, then applies the principal's rate limit, its headers set on `headers`; `then` runs within the limit
   * (in this call when the counter is in memory), and a refusal (429) or any error goes to `fail`.
   */
  protected counted(target: LeanTarget, principal: Principal, headers: Record<string, string>, then: () => void, fail: (err: unknown) => void): void {
    const { deps } = this;
    const within = (verdict: Verdict | undefined): void => {
      if (verdict !== undefined) {
        setRateHeaders(headers, verdict.shown);
        if (verdict.refused) throw rateLimited(verdict);
      }
      then();
    };
    try {
      countVersion(deps, target.version, principal);
      const verdict = deps.limiter.limits.enabled ? deps.limiter.forPrincipal(principal) : undefined;
      if (verdict instanceof Promise) verdict.then(within).catch(fail);
      else within(verdict);
    } catch (err) {
      fail(err);
    }
  }

  /** The request, when this path takes it. */
  protected abstract match(req: IncomingMessage): T | undefined;

  /** Answers a request taken, its caller authenticated (`waited`: by a store read); handles its own errors. */
  protected abstract respond(taken: T, principal: Principal, waited: boolean, req: IncomingMessage, res: ServerResponse, arrived: number): void;
}
