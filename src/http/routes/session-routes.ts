// Cookie-session endpoints (DESIGN §8): login, the current session, logout, and password change ending every session.
import { UUID_PATTERN as UUID } from '../../lib/uuid.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { newestVersion } from '../../model/compile.js';
import { clearCookie, csrfCookie, sessionCookie } from '../../auth/session-cookies.js';
import { AppError } from '../../errors/app-error.js';
import { crossSiteReason, originOf } from '../../auth/origin-check.js';
import { publicView } from '../../services/views.js';
import type { CurrentSession } from '../../services/sessions.js';
import type { HttpDeps } from '../deps.js';
import { authHook, csrfHook, ipLimitHook, limitPasswordAttempt } from '../transport/auth-hooks.js';
import type { RouteSpec } from './operation-routes.js';

function single(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return typeof v === 'string' ? v : undefined;
}

/**
 * onRequest of `POST /sessions`, before its body is read. A login carrying an API key or a bearer token is
 * refused: such requests never create sessions (DESIGN §8). A login from another site's page is refused
 * (login CSRF: an attacker's page would otherwise log the victim's browser into the attacker's account,
 * and whatever the victim then enters lands there). The server's own origin is the public URL's and the
 * one the request was sent to (its Host, and its scheme as a trusted proxy reports it): a browser cannot
 * make a cross-site request with another site's Host.
 */
function loginGuard(deps: HttpDeps) {
  const publicOrigin = deps.config.publicUrl ? originOf(deps.config.publicUrl) : undefined;
  const trusted = new Set(deps.config.trustedOrigins);
  return async (request: FastifyRequest): Promise<void> => {
    if (request.headers['x-api-key'] !== undefined || request.headers.authorization !== undefined) {
      throw new AppError('BAD_REQUEST', 'A login sends an email and a password only: requests with an API key or a bearer token never create a session.');
    }
    const own = originOf(`${request.protocol}://${request.host}`);
    const reason = crossSiteReason(
      { origin: single(request, 'origin'), secFetchSite: single(request, 'sec-fetch-site'), referer: single(request, 'referer') },
      (origin) => origin === own || origin === publicOrigin || trusted.has(origin),
    );
    if (reason) throw new AppError('CROSS_SITE_REQUEST', `Sessions are created only from this server's own pages or CANON_TRUSTED_ORIGINS (${reason}).`);
  };
}

/** The handlers of the session and password operations (src/catalog/platform-operations.ts). */
export function sessionHandlers(deps: HttpDeps): Record<string, RouteSpec> {
  const version = newestVersion(deps.model).name;
  const auth = authHook(deps);
  const csrf = csrfHook(deps);
  const users = deps.model.resources.get(deps.model.users)!;
  const view = ({ record, user, csrfToken }: CurrentSession): Record<string, unknown> => ({
    user: publicView(users, user),
    csrf_token: csrfToken,
    expires_at: record.expires_at,
    created_at: record.created_at,
    last_accessed: record.last_accessed,
  });

  const login: RouteSpec = {
    onRequest: [ipLimitHook(deps), loginGuard(deps)],
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const { session, account } = await deps.sessions.login(request.body, request.bodyFormat, (name) => limitPasswordAttempt(deps, request, reply, name));
      const cookies = [sessionCookie(deps.cookieNames, session.id, session.maxAge)];
      if (deps.config.csrfMode === 'double-submit') cookies.push(csrfCookie(deps.cookieNames, session.csrfToken, session.maxAge));
      // The device cookie marks this browser as one that knew the password: its guessing budget is its own.
      cookies.push(deps.deviceCookies.issue(account));
      reply.code(201).header('set-cookie', cookies).header('location', `/${version}/sessions/current`).header('cache-control', 'no-store');
      return view(session);
    },
  };

  const current: RouteSpec = {
    onRequest: auth,
    handler: async (request, reply) => {
      const session = await deps.sessions.current(request.principal!);
      reply.header('cache-control', 'no-store');
      return view(session);
    },
  };
  const logout: RouteSpec = {
    onRequest: auth,
    preHandler: csrf,
    handler: async (request, reply) => {
      await deps.sessions.logout(request.principal!);
      // The renewed cookie authentication queued is void now: only the deletions go out.
      reply.removeHeader('set-cookie');
      const cookies = [clearCookie(deps.cookieNames, deps.cookieNames.session)];
      if (deps.config.csrfMode === 'double-submit') cookies.push(clearCookie(deps.cookieNames, deps.cookieNames.csrf));
      return reply.code(204).header('set-cookie', cookies).header('cache-control', 'no-store').send();
    },
  };

  const password: RouteSpec = {
    onRequest: auth,
    preHandler: csrf,
    handler: async (request, reply) => {
      const id = (request.params as { id: string }).id;
      if (!UUID.test(id)) throw new AppError('BAD_REQUEST', 'The id in the path is not a UUID.', { details: [{ field: 'id', message: 'must be a UUID', value: id }] });
      const principal = request.principal!;
      await deps.passwordChanges.change(principal, id.toLowerCase(), request.body, request.bodyFormat, (account) => limitPasswordAttempt(deps, request, reply, account));
      if (principal.session) reply.removeHeader('set-cookie').header('set-cookie', clearCookie(deps.cookieNames, deps.cookieNames.session));
      return reply.code(204).header('cache-control', 'no-store').send();
    },
  };

  return {
    [`${version}.sessions.create`]: login,
    [`${version}.sessions.current.read`]: current,
    [`${version}.sessions.current.delete`]: logout,
    [`${version}.${users.name}.password.replace`]: password,
  };
}
