// Version selection for unversioned paths (DESIGN §10): by query parameter, header or media type, rewritten to the versioned route before routing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiVersion } from '../../model/versions.js';

export type VersioningStrategy = 'path' | 'query' | 'header' | 'media-type' | 'date';

/** The header the header strategy reads (DESIGN §10). */
export const VERSION_HEADER = 'x-api-version';
/** The header the date strategy reads, and answers with the release date it resolved (DESIGN §10). */
export const DATE_HEADER = 'canon-version';
const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
/** `application/vnd.canon.v2+json`, with or without parameters. */
const VENDOR_TYPE = /application\/vnd\.canon\.([^+;,\s]+)\+json/i;
/** A version as clients spell it: `2` or `v2`. */
const SPELLING = /^v?([0-9]{1,6})$/;

/** What a request asked for, kept on it for the error handler: set only when the server does not serve it. */
export const UNSUPPORTED = Symbol('canon.unsupportedVersion');
/** The version parameters of a query that names its version more than once (`version=1&version=2`), as sent. */
const REPEATED = Symbol('canon.repeatedVersion');
/** The caller's version pin, found before routing by the date strategy (pinningListener). */
const PIN = Symbol('canon.versionPin');
type Marked = IncomingMessage & { [UNSUPPORTED]?: string; [REPEATED]?: string; [PIN]?: string };

/** The path an unsupported version is routed to: no route has it, so the unmatched handler answers (400). */
const NOWHERE = '/~unsupported-version';

/** The version a request asked for and the server does not serve, if any. */
export function unsupportedVersionOf(req: IncomingMessage): string | undefined {
  return (req as Marked)[UNSUPPORTED];
}

/** Under the query strategy, the version parameters of a request that named its version more than once (`version=1&v=2`). */
export function repeatedVersionOf(req: IncomingMessage): string | undefined {
  return (req as Marked)[REPEATED];
}

/**
 * Under the path strategy URLs name their version and pass untouched. Under the others the API is served at
 * unversioned paths (`/products`): each request's version is read from where the strategy says (absent: the
 * current one) and the URL is rewritten to the versioned route (`/v1/products`) before Fastify routes it, so
 * everything after — rendering, links' version, cursors, ETags, idempotency fingerprints, deprecation headers
 * — is the path strategy's. Paths outside the versioned API (`/events`, `/healthz`, `/oauth/…`) pass untouched.
 */
export class VersionSelector {
  private readonly served = new Map<string, ApiVersion>();

  constructor(
    readonly strategy: VersioningStrategy,
    versions: readonly ApiVersion[],
    /** First path segments of the operations outside any version (`events`, `oauth`, `.well-known`). */
    private readonly unversioned: ReadonlySet<string>,
  ) {
    for (const v of versions) this.served.set(v.name, v);
  }

  /** The header a cache must key responses on, if any (RFC 9110 §12.5.5). */
  get vary(): string | undefined {
    return this.strategy === 'header' ? 'X-API-Version' : this.strategy === 'media-type' ? 'Accept' : this.strategy === 'date' ? 'Canon-Version' : undefined;
  }

  /** Whether a request needs its caller's pin to be routed: the date strategy, a versioned path, no `Canon-Version`. */
  needsPin(req: IncomingMessage): boolean {
    if (this.strategy !== 'date' || req.headers[DATE_HEADER] !== undefined) return false;
    const url = req.url ?? '/';
    const first = url.slice(1).split(/[/?]/, 1)[0]!;
    return !this.unversioned.has(first);
  }

  /**
   * The version of a request to an unversioned operation (`/events`): what the strategy's header, parameter or
   * media type names, else the credential's pin (`pin`, a release date), else the current one. `null` when what
   * was named is not served. Under `path` nothing is named in the request: the pin decides.
   */
  forUnversioned(req: IncomingMessage, query: Record<string, unknown>, pin: string | undefined): ApiVersion | null {
    let named: string | undefined;
    if (this.strategy === 'header') named = single(req.headers[VERSION_HEADER]);
    else if (this.strategy === 'media-type') named = VENDOR_TYPE.exec(req.headers.accept ?? '')?.[1];
    else if (this.strategy === 'query') named = single((query.version ?? query.v) as string | string[] | undefined);
    else if (this.strategy === 'date') {
      const date = single(req.headers[DATE_HEADER]);
      if (date !== undefined) {
        const name = this.onOrBefore(date.trim());
        return name === undefined ? null : this.served.get(name)!;
      }
    }
    if (named !== undefined) {
      const name = this.nameOf(named.trim());
      return name === undefined ? null : this.served.get(name)!;
    }
    const pinned = pin === undefined ? undefined : this.onOrBefore(pin);
    return this.served.get(pinned ?? this.newest())!;
  }

  /** The release date of the version a routed URL names (`/v1/…` → `2025-01-15`): the date strategy echoes it. */
  dateOf(url: string): string | undefined {
    const name = /^\/(v[0-9]+)(?:[/?]|$)/.exec(url)?.[1];
    return name === undefined ? undefined : this.served.get(name)?.date;
  }

  rewrite(req: IncomingMessage): string {
    const url = req.url ?? '/';
    if (this.strategy === 'path') return url;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    let query = q < 0 ? '' : url.slice(q + 1);
    // Issue 26.11: a version named twice (`version=1&version=2`, `version=2&v=1`, even `v=1&v=1`) is ambiguous, as
    // two X-API-Version or Canon-Version headers are under their strategies: 400 on every path, /events and the
    // service paths included, rather than serving whichever came first.
    if (this.strategy === 'query' && q >= 0) {
      const named = versionParams(query);
      if (named.length > 1) {
        (req as Marked)[REPEATED] = named.join('&').slice(0, 128);
        return NOWHERE;
      }
    }
    const first = path.split('/', 2)[1] ?? '';
    if (this.unversioned.has(first)) return url;
    let requested: string | undefined;
    if (this.strategy === 'header') {
      const h = req.headers[VERSION_HEADER];
      requested = Array.isArray(h) ? h.join(',') : h;
    } else if (this.strategy === 'media-type') {
      requested = VENDOR_TYPE.exec(req.headers.accept ?? '')?.[1];
    } else if (this.strategy === 'date') {
      const h = req.headers[DATE_HEADER];
      const asked = Array.isArray(h) ? h.join(',') : (h ?? (req as Marked)[PIN]);
      const name = asked === undefined ? this.newest() : this.onOrBefore(asked.trim());
      if (name === undefined) {
        (req as Marked)[UNSUPPORTED] = asked!;
        return NOWHERE;
      }
      return `/${name}${path === '/' ? '' : path}${query ? `?${query}` : ''}`;
    } else {
      ({ requested, query } = takeVersionParam(query));
    }
    const name = requested === undefined ? this.newest() : this.nameOf(requested.trim());
    if (name === undefined) {
      (req as Marked)[UNSUPPORTED] = requested!;
      return NOWHERE;
    }
    return `/${name}${path === '/' ? '' : path}${query ? `?${query}` : ''}`;
  }

  private newest(): string {
    return this.served.keys().next().value!;
  }

  /** The newest version released on or before `date` (a real calendar date, YYYY-MM-DD). */
  private onOrBefore(date: string): string | undefined {
    const m = DATE.exec(date);
    if (!m) return undefined;
    const day = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
    if (day.toISOString().slice(0, 10) !== date) return undefined;
    for (const [name, v] of this.served) if (v.date <= date) return name;
    return undefined;
  }

  private nameOf(spelled: string): string | undefined {
    const digits = SPELLING.exec(spelled)?.[1];
    const name = digits === undefined ? undefined : `v${Number(digits)}`;
    return name !== undefined && this.served.has(name) ? name : undefined;
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** The `version=` and `v=` parameters of a query string, as sent. */
function versionParams(query: string): string[] {
  return query.split('&').filter((part) => {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    return key === 'version' || key === 'v';
  });
}

/** `version=` or `v=` out of a query string (rewrite has refused a query naming more than one); the rest left as sent. */
function takeVersionParam(query: string): { requested: string | undefined; query: string } {
  let requested: string | undefined;
  const kept: string[] = [];
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    if (key === 'version' || key === 'v') {
      if (requested === undefined) {
        try {
          requested = decodeURIComponent(eq < 0 ? '' : part.slice(eq + 1).replace(/\+/g, ' '));
        } catch {
          requested = part;
        }
      }
      continue;
    }
    if (part !== '') kept.push(part);
  }
  return { requested, query: kept.join('&') };
}

/** Whether Accept names one of this API's vendor media types (the media-type strategy answers JSON in it). */
export function acceptsVendorJson(accept: string | undefined): boolean {
  return accept !== undefined && VENDOR_TYPE.test(accept);
}

/**
 * onSend under the media-type strategy: a JSON response of a versioned route declares its version in its
 * media type (`application/vnd.canon.v1+json`), errors included, so a cache or a client can tell them apart.
 */
export async function mediaTypeHook(request: { url: string }, reply: { getHeader(name: string): unknown; header(name: string, value: string): unknown }): Promise<void> {
  const type = reply.getHeader('content-type');
  if (typeof type !== 'string' || !type.startsWith('application/json')) return;
  const version = /^\/(v[0-9]+)(?:[/?]|$)/.exec(request.url)?.[1];
  if (version) reply.header('content-type', `application/vnd.canon.${version}+json; charset=utf-8`);
}

/**
 * The date strategy's front door: a request that names no version is served in its credential's pin, which is
 * known only once the credential is read. So before Fastify routes it, such a request is authenticated (the
 * credential caches make the second authentication, in the route's hook, a cache hit) and its pin kept on it
 * for the rewrite. A request whose credentials fail gets the current version; its route then answers 401.
 */
export function pinningListener(
  selector: VersionSelector,
  pinOf: (req: IncomingMessage) => Promise<string | undefined>,
  next: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (!selector.needsPin(req)) {
      next(req, res);
      return;
    }
    pinOf(req)
      .catch(() => undefined)
      .then((pin) => {
        if (pin !== undefined) (req as Marked)[PIN] = pin;
        next(req, res);
      });
  };
}
