// OAuth 2.0 endpoints: the client-credentials token endpoint (RFC 6749 §4.4), server metadata (RFC 8414) and the JWKS.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientCredentials, OAuthError } from '../../auth/oauth-clients.js';
import { isAppError } from '../../errors/app-error.js';
import type { HttpDeps } from '../deps.js';
import { ipLimitHook, verifiedCertificateSha256 } from '../transport/auth-hooks.js';
import { JSON_CONTENT_TYPE } from '../transport/negotiate.js';
import type { RouteSpec } from './operation-routes.js';
import { factHeaders } from '../rendering/error-facts.js';
import { PLATFORM_SCOPES } from '../../platform/platform-scopes.js';

/** RFC 6749 §5.2: the token endpoint answers errors in its own body shape, never the Canon error body. */
function oauthError(reply: FastifyReply, err: OAuthError): FastifyReply {
  reply.code(err.status).header('cache-control', 'no-store').header('pragma', 'no-cache');
  if (err.basicChallenge) reply.header('www-authenticate', 'Basic realm="canon", charset="UTF-8"');
  return reply.type(JSON_CONTENT_TYPE).send({ error: err.error, error_description: err.description });
}

/** The handlers of `oauth.metadata`, `oauth.jwks` and `oauth.token` (src/catalog/platform-operations.ts). */
export function oauthHandlers(deps: HttpDeps): Record<string, RouteSpec> {
  // Every scope a client may ask for, computed once: `*`, read/write per resource clients can reach, and the platform's own.
  const scopes = ['*', ...[...deps.model.resources.values()].filter((r) => !r.def.internal).flatMap((r) => [`${r.name}:read`, `${r.name}:write`]), ...PLATFORM_SCOPES];
  const metadata: RouteSpec = {
    handler: async (_req, reply) => {
      const issuer = deps.issuer();
      reply.header('cache-control', 'public, max-age=300');
      return {
        issuer,
        token_endpoint: `${issuer}/oauth/token`,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', ...(deps.config.tls?.clientCaFile ? ['tls_client_auth'] : [])],
        scopes_supported: scopes,
        response_types_supported: ['token'],
      };
    },
  };

  const jwks: RouteSpec = {
    handler: async (_req, reply) => {
      // Short caching: a rotated key must reach verifiers before tokens signed with it arrive.
      reply.header('cache-control', 'public, max-age=60');
      return deps.signingKeys.jwks();
    },
  };

  const token: RouteSpec = {
    onRequest: ipLimitHook(deps),
    errorHandler: (err, _request, reply) => {
      if (err instanceof OAuthError) return oauthError(reply, err);
      // A rate-limited token request keeps its 429 and Retry-After; RFC 6749 has no error code for it.
      if (isAppError(err) && err.code === 'RATE_LIMITED') {
        for (const [name, value] of Object.entries(factHeaders(err.facts))) reply.header(name, value);
        return oauthError(reply, new OAuthError('slow_down', err.message, 429));
      }
      if (isAppError(err) && err.status < 500) return oauthError(reply, new OAuthError('invalid_request', err.message));
      const code = (err as { statusCode?: number }).statusCode;
      if (code && code < 500) return oauthError(reply, new OAuthError('invalid_request', 'The request is malformed.'));
      deps.log.error({ err, request_id: reply.request.id }, 'token endpoint failure');
      return oauthError(reply, new OAuthError('server_error', 'The token could not be issued.', 500));
    },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      if (request.bodyFormat !== 'form') throw new OAuthError('invalid_request', 'Send the token request as application/x-www-form-urlencoded (RFC 6749 §4.4.2).');
      const form = (request.body ?? {}) as Record<string, string>;
      if (!form.grant_type) throw new OAuthError('invalid_request', 'grant_type is required.');
      if (form.grant_type !== 'client_credentials') throw new OAuthError('unsupported_grant_type', 'Only client_credentials is supported.');
      const certificate = verifiedCertificateSha256(request.raw.socket);
      const authorization = typeof request.headers.authorization === 'string' ? request.headers.authorization : undefined;
      const token = await deps.clientCredentials.issue(clientCredentials(authorization, form, certificate), certificate, form.scope);
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      return token;
    },
  };
  return { 'oauth.metadata': metadata, 'oauth.jwks': jwks, 'oauth.token': token };
}
