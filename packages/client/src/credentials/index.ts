// Picks the credential createClient was given (DESIGN §7: apiKey | token | oauth | session) and builds it.
import type { Credential, Transport } from '../transport.js';
import { OAuthCredential, type OAuthOptions } from './oauth.js';
import { SessionCredential, type SessionOptions } from './session.js';
import { apiKeyCredential, bearerCredential } from './static.js';

export type { OAuthOptions } from './oauth.js';
export type { SessionOptions } from './session.js';
export { SessionCredential } from './session.js';

/** At most one of these; none makes an anonymous client (public operations only). */
export interface CredentialOptions {
  /** An API key, sent as `X-API-Key`. */
  apiKey?: string;
  /** A bearer token, or a function returning the current one. */
  token?: string | (() => string | Promise<string>);
  /** OAuth 2.0 client credentials: the client gets, caches and renews the bearer token itself. */
  oauth?: OAuthOptions;
  /** A cookie session with its CSRF token. */
  session?: SessionOptions;
}

export function credentialOf(options: CredentialOptions, transport: Transport, sessionsPath: string): Credential | undefined {
  const given = (['apiKey', 'token', 'oauth', 'session'] as const).filter((name) => options[name] !== undefined);
  if (given.length > 1) throw new TypeError(`createClient takes one credential, not ${given.join(' and ')}`);
  if (options.apiKey !== undefined) return apiKeyCredential(options.apiKey);
  if (options.token !== undefined) return bearerCredential(options.token);
  if (options.oauth !== undefined) return new OAuthCredential(options.oauth, transport);
  if (options.session !== undefined) return new SessionCredential(options.session, transport, sessionsPath);
  return undefined;
}
