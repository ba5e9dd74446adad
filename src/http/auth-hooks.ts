// Fastify hooks around src/auth: credentials from headers, cookies and the TLS socket; CSRF on cookie-authenticated writes.
import { parse as parseCookies } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TLSSocket } from 'node:tls';
import { csrfHolds, UNSAFE_METHODS } from '../auth/csrf.js';
import { AppError } from '../errors/app-error.js';
import type { HttpDeps } from './app.js';

export function cookiesOf(request: FastifyRequest): Record<string, string | undefined> {
  const header = request.headers.cookie;
  return header ? parseCookies(header) : {};
}

/**
 * The SHA-256 of the client certificate, only when TLS verified it against the configured client CA.
 * It comes from the socket alone: no header can stand in for a certificate.
 */
export function verifiedCertificateSha256(request: FastifyRequest): string | undefined {
  const socket = request.raw.socket as Partial<TLSSocket>;
  if (!socket.encrypted || !socket.authorized || typeof socket.getPeerCertificate !== 'function') return undefined;
  const fingerprint = socket.getPeerCertificate().fingerprint256;
  return fingerprint ? fingerprint.replace(/:/g, '').toLowerCase() : undefined;
}

/** onRequest: authenticates before the body is read, so anonymous callers never make the server parse bodies. */
export function authHook(deps: HttpDeps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const result = await deps.auth.authenticate({ headers: request.headers, cookies: cookiesOf(request), certificateSha256: verifiedCertificateSha256(request) });
    request.principal = result.principal;
    if (result.setCookies.length) reply.header('set-cookie', result.setCookies);
  };
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
