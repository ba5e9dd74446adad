// One entry for every mechanism (API key, bearer token, session cookie, client certificate) → one Principal.
import { AppError, type Challenge } from '../errors/app-error.js';
import { cachedPrincipalForApiKey, principalForApiKey, type CredentialReader } from './api-keys.js';
import type { CredentialCache } from './credential-cache.js';
import { currentClientGrant, effectiveScopes, principalForCertificate, type ClientGrant } from './oauth-clients.js';
import type { Principal } from '../model/principal.js';
import type { CookieNames } from './session-cookies.js';
import type { SessionManager } from './sessions.js';
import { InvalidToken, type TokenService } from './tokens.js';

/** RFC 9110 §11.6.1: a 401 names every scheme the client could use. */
/** What a client may authenticate with (RFC 6750 §3 for Bearer; API keys in X-API-Key). */
export const CHALLENGES: Challenge[] = [
  { scheme: 'Bearer', params: { realm: 'canon' } },
  { scheme: 'ApiKey', params: { realm: 'canon', header: 'X-API-Key' } },
];

export interface Credentials {
  headers: Record<string, string | string[] | undefined>;
  cookies: Record<string, string | undefined>;
  /** The SHA-256 of a client certificate the TLS layer verified against the client CA; nothing else sets it. */
  certificateSha256: string | undefined;
}

export interface Authenticated {
  principal: Principal;
  /** Set-Cookie values to send back (a renewed session cookie). */
  setCookies: string[];
}

function unauthenticated(message: string, challenges: Challenge[] = CHALLENGES, clearCookies?: string[]): AppError {
  return new AppError('UNAUTHENTICATED', message, { facts: { challenges, ...(clearCookies ? { clearCookies } : {}) } });
}

/** Credential lookups cached until the store's credentials epoch moves: API keys by secret, OAuth clients by id. */
export interface AuthCaches {
  keys: CredentialCache<Principal>;
  clients: CredentialCache<ClientGrant | null>;
}

export class Authenticator {
  constructor(
    private readonly store: CredentialReader,
    private readonly users: string,
    private readonly tokens: TokenService,
    private readonly sessions: SessionManager,
    private readonly cookies: CookieNames,
    private readonly sessionCookie: (id: string, maxAge: number) => string,
    private readonly caches?: AuthCaches,
  ) {}

  /**
   * What `authenticate` would answer, at once, when the request presents an API key the credential cache holds at
   * the current credentials epoch (a revoked key or a changed user moves the epoch, so it is never answered from
   * an old entry); undefined when only `authenticate` can tell, failures included. X-API-Key comes first there too.
   */
  authenticatedNow(c: Credentials): Authenticated | undefined {
    const key = c.headers['x-api-key'];
    if (typeof key !== 'string' || this.caches === undefined) return undefined;
    const principal = cachedPrincipalForApiKey(this.store, key, this.caches.keys);
    return principal === undefined ? undefined : { principal, setCookies: [] };
  }

  /**
   * Explicit credentials come first (X-API-Key, then Authorization), then the session cookie, then a
   * verified client certificate. Key and bearer requests never touch sessions (statelessness, spec §5).
   */
  async authenticate(c: Credentials): Promise<Authenticated> {
    const key = c.headers['x-api-key'];
    if (key !== undefined) {
      const principal = typeof key === 'string' ? await principalForApiKey(this.store, this.users, key, this.caches?.keys) : null;
      if (!principal)
        throw unauthenticated('The API key is invalid or has been revoked.', [{ scheme: 'ApiKey', params: { realm: 'canon', header: 'X-API-Key', error: 'invalid_key' } }]);
      return { principal, setCookies: [] };
    }
    const authorization = c.headers.authorization;
    if (authorization !== undefined) {
      const m = typeof authorization === 'string' ? /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization) : null;
      if (!m) throw unauthenticated('Send a bearer token as "Authorization: Bearer <token>".', [{ scheme: 'Bearer', params: { realm: 'canon', error: 'invalid_request' } }]);
      try {
        return { principal: await this.asClientIsNow(await this.tokens.verify(m[1]!)), setCookies: [] };
      } catch (err) {
        if (!(err instanceof InvalidToken)) throw err;
        throw unauthenticated(`The bearer token is not valid: ${err.message}.`, [
          { scheme: 'Bearer', params: { realm: 'canon', error: 'invalid_token', error_description: err.message } },
        ]);
      }
    }
    const sessionId = c.cookies[this.cookies.session];
    if (sessionId !== undefined) {
      const resolved = await this.sessions.resolve(sessionId);
      // An unknown, expired or planted id never authenticates; the browser is told to drop it.
      if (!resolved) throw unauthenticated('The session has ended; log in again.', CHALLENGES, [this.cookies.session]);
      return { principal: resolved.principal, setCookies: resolved.renewedMaxAge === undefined ? [] : [this.sessionCookie(sessionId, resolved.renewedMaxAge)] };
    }
    if (c.certificateSha256) {
      const principal = await principalForCertificate(this.store, c.certificateSha256);
      if (!principal) throw unauthenticated('The client certificate is not registered on any OAuth client.');
      return { principal, setCookies: [] };
    }
    throw unauthenticated('Authentication required: send an API key (X-API-Key), a bearer token, a session cookie or a registered client certificate.');
  }

  /** A token acts for its client as the client is now: a deleted client's tokens are refused, a narrowed one's narrowed. */
  private async asClientIsNow(principal: Principal): Promise<Principal> {
    const grant = await currentClientGrant(this.store, principal.credentialId, this.caches?.clients);
    if (!grant) throw new InvalidToken('its client has been deleted');
    const scopes = effectiveScopes(principal.scopes, grant.scopes);
    if (!scopes) throw new InvalidToken('its client no longer holds any of its scopes');
    const pinned = grant.apiVersion === undefined ? {} : { apiVersion: grant.apiVersion };
    return scopes === principal.scopes && grant.apiVersion === undefined ? principal : { ...principal, scopes, ...pinned };
  }
}
