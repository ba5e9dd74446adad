// Fastify hooks around src/auth: credentials from headers, cookies and the TLS socket; CSRF on cookie-authenticated writes.
import { parse as parseCookies } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { csrfHolds, UNSAFE_METHODS } from '../../auth/csrf.js';
import { AppError } from '../../errors/app-error.js';
import { rateHeaders, rateLimited, type Verdict } from '../../limits/rate-limiter.js';
import type { Principal } from '../../model/principal.js';
import type { HttpDeps } from '../deps.js';

export function cookiesOf(request: FastifyRequest): Record<string, string | undefined> {
  const header = request.headers.cookie;
  return header ? parseCookies(header) : {};
}

/**
 * The SHA-256 of the client certificate, only when TLS verified it against the configured client CA.
 * It comes from the socket alone: no header can stand in for a certificate.
 */
export function verifiedCertificateSha256(rawSocket: Socket): string | undefined {
  const socket = rawSocket as Partial<TLSSocket>;
  if (!socket.encrypted || !socket.authorized || typeof socket.getPeerCertificate !== 'function') return undefined;
  const fingerprint = socket.getPeerCertificate().fingerprint256;
  return fingerprint ? fingerprint.replace(/:/g, '').toLowerCase() : undefined;
}

/** Applies a rate-limit verdict: the X-RateLimit-* headers always, and 429 when refused. */
async function limit(reply: FastifyReply, verdict: Verdict | Promise<Verdict>): Promise<void> {
  const v = verdict instanceof Promise ? await verdict : verdict;
  for (const [name, value] of Object.entries(rateHeaders(v.shown))) reply.header(name, value);
  if (v.refused) throw rateLimited(v);
}

/**
 * onRequest: authenticates before the body is read, so anonymous callers never make the server parse
 * bodies, then counts the request against its principal; failed authentication counts against the IP.
 */
export function authHook(deps: HttpDeps, authenticated?: (principal: Principal) => void) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    let result;
    // Before authentication's store read: a read sent after this moment may vouch for kept data (Ctx.since).
    request.arrivedAt = performance.now();
    try {
      result = await deps.auth.authenticate({ headers: request.headers, cookies: cookiesOf(request), certificateSha256: verifiedCertificateSha256(request.raw.socket) });
    } catch (err) {
      if (deps.limiter.limits.enabled) await limit(reply, deps.limiter.forIp(request.ip));
      throw err;
    }
    request.principal = result.principal;
    authenticated?.(result.principal);
    if (result.setCookies.length) reply.header('set-cookie', result.setCookies);
    if (deps.limiter.limits.enabled) await limit(reply, deps.limiter.forPrincipal(result.principal));
  };
}

/** Counts an anonymous request against its client's address (429 when over the per-IP limit). */
export async function limitIp(deps: HttpDeps, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (deps.limiter.limits.enabled) await limit(reply, deps.limiter.forIp(request.ip));
}

/** onRequest for public endpoints (login, the token endpoint, metadata): anonymous traffic counts per IP. */
export function ipLimitHook(deps: HttpDeps) {
  return (request: FastifyRequest, reply: FastifyReply): Promise<void> => limitIp(deps, request, reply);
}

/**
 * Before any password is checked (login, password change): counted per device when the client holds a
 * device cookie for `account`, else per account, and per IP (RateLimiter.forPasswordAttempt).
 */
export async function limitPasswordAttempt(deps: HttpDeps, request: FastifyRequest, reply: FastifyReply, account: string): Promise<void> {
  if (!deps.limiter.limits.enabled) return;
  const device = deps.deviceCookies.deviceOf(cookiesOf(request)[deps.cookieNames.device], account);
  await limit(reply, deps.limiter.forPasswordAttempt({ account, ip: request.ip, ...(device !== undefined ? { device } : {}) }));
}

/** preHandler: writes authenticated by a session cookie need the session's CSRF token (DESIGN §8). */
export function csrfHook(deps: HttpDeps) {
  return async (request: FastifyRequest): Promise<void> => {
    const body = request.body as Record<string, unknown> | undefined;
    const formToken = request.bodyFormat === 'form' && body && typeof body.csrf_token === 'string' ? body.csrf_token : undefined;
    // The form field is a transport detail, never a field of the resource.
    if (request.bodyFormat === 'form' && body && 'csrf_token' in body) delete body.csrf_token;
    const session = request.principal?.session;
    if (!session || !UNSAFE_METHODS.has(request.method)) return;
    const header = request.headers['x-csrf-token'];
    const submitted = typeof header === 'string' ? header : formToken;
    if (!csrfHolds(deps.config.csrfMode, session.csrfToken, submitted, cookiesOf(request)[deps.cookieNames.csrf])) {
      throw new AppError('CSRF_TOKEN_INVALID', 'This write is authenticated by a session cookie and needs its CSRF token in X-CSRF-Token or the csrf_token form field.');
    }
  };
}
