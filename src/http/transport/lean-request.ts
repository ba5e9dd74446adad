// What the lean GET paths (fast-reads.ts, fast-lists.ts) share: what they ask of a request before taking it (that Fastify's app-wide onRequest hook would only add headers to it), and how they authenticate one.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Credentials } from '../../auth/authenticator.js';
import type { Principal } from '../../model/principal.js';
import type { HttpDeps } from '../deps.js';
import { verifiedCertificateSha256 } from './auth-hooks.js';
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

export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** A lean path's answer to a request it took, its caller authenticated; `waited`: authentication had to (a store read). */
export type LeanAnswer<T> = (taken: T, principal: Principal, req: IncomingMessage, res: ServerResponse, arrived: number, waited: boolean) => void;

/**
 * A lean path's request listener: `match` picks the requests it takes, every other goes to `next`. A taken request is
 * authenticated from memory when it can be (a warm key), else by a store read, then answered. One that fails
 * authentication goes to `next` untouched: nothing has happened yet, and Fastify authenticates it again, counts the
 * failure against the IP and answers. `answer` handles its own errors.
 */
export function leanListener<T>(deps: HttpDeps, match: (req: IncomingMessage) => T | undefined, answer: LeanAnswer<T>, next: Listener): Listener {
  return (req, res) => {
    const taken = match(req);
    if (taken === undefined) {
      next(req, res);
      return;
    }
    // The request's arrival, before any store read: a read sent after it may vouch for kept data (Ctx.since). Taken
    // only for requests a lean path serves; Fastify's auth hook takes its own.
    const arrived = performance.now();
    const credentials: Credentials = { headers: req.headers, cookies: {}, certificateSha256: verifiedCertificateSha256(req.socket) };
    const known = deps.auth.authenticatedNow(credentials);
    if (known !== undefined) {
      answer(taken, known.principal, req, res, arrived, false);
      return;
    }
    deps.auth.authenticate(credentials).then(
      ({ principal }) => answer(taken, principal, req, res, arrived, true),
      () => next(req, res),
    );
  };
}
