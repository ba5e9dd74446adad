// Resolves a request's credentials to a Principal; only API keys for now (bearer, mTLS and sessions come later).
import { principalForApiKey } from '../auth/api-keys.js';
import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors/app-error.js';
import type { Reader } from '../store/types.js';

/** RFC 9110 §11.6.1: a 401 names the scheme the client should use. */
export const CHALLENGE = 'ApiKey realm="canon", header="X-API-Key"';

export type Authenticator = (headers: Record<string, string | string[] | undefined>) => Promise<Principal>;

export function apiKeyAuthenticator(store: Reader, usersResource: string): Authenticator {
  return async (headers) => {
    const key = headers['x-api-key'];
    if (key === undefined) {
      throw new AppError('UNAUTHENTICATED', 'Authentication required: send your API key in the X-API-Key header.', { headers: { 'www-authenticate': CHALLENGE } });
    }
    const principal = typeof key === 'string' ? await principalForApiKey(store, usersResource, key) : null;
    if (!principal) {
      throw new AppError('UNAUTHENTICATED', 'The API key is invalid or has been revoked.', { headers: { 'www-authenticate': `${CHALLENGE}, error="invalid_key"` } });
    }
    return principal;
  };
}
