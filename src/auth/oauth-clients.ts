// OAuth 2.0 client authentication for the token endpoint: HTTP Basic or form fields (RFC 6749 §2.3.1), or a certificate (RFC 8705).
import { OAUTH_CLIENTS } from '../platform/oauth-clients.js';
import type { Reader, StoredRecord } from '../store/types.js';
import type { CredentialReader } from './api-keys.js';
import type { CredentialCache } from './credential-cache.js';
import type { Principal } from '../model/principal.js';
import { digest, safeEqual } from '../lib/secrets.js';
import { isWellFormedText } from '../model/well-formed-text.js';
import { decodeFormComponent } from '../lib/form-encoding.js';

/** An RFC 6749 §5.2 error; `status` 401 for client authentication failures, 400 otherwise. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly basicChallenge = false,
  ) {
    super(description);
  }
}

export interface ClientCredentials {
  clientId: string;
  secret: string | undefined;
  via: 'basic' | 'post' | 'certificate';
}

/** Extracts the client's credentials; using more than one method at once is an invalid_request. */
export function clientCredentials(authorization: string | undefined, form: Record<string, string>, certificateSha256: string | undefined): ClientCredentials {
  const basic = authorization?.match(/^Basic\s+([A-Za-z0-9+/=]+)\s*$/i);
  if (authorization !== undefined && !basic) throw new OAuthError('invalid_client', 'Only HTTP Basic client authentication is accepted in Authorization.', 401, true);
  const posted = form.client_secret !== undefined;
  if (basic && posted) throw new OAuthError('invalid_request', 'Use one client authentication method, not several.');
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'Malformed Basic credentials.', 401, true);
    // Each part is form-encoded (RFC 6749 §2.3.1).
    const clientId = decodeFormComponent(decoded.slice(0, colon));
    const secret = decodeFormComponent(decoded.slice(colon + 1));
    if (clientId === undefined || secret === undefined) throw new OAuthError('invalid_client', 'Malformed Basic credentials.', 401, true);
    return { clientId, secret, via: 'basic' };
  }
  if (form.client_id === undefined) throw new OAuthError('invalid_client', 'Client authentication is required.', 401, true);
  if (posted) return { clientId: form.client_id, secret: form.client_secret, via: 'post' };
  if (certificateSha256) return { clientId: form.client_id, secret: undefined, via: 'certificate' };
  throw new OAuthError('invalid_client', 'Client authentication is required.', 401, true);
}

/** Looks the client up and checks its secret (constant time) or its registered certificate. */
export async function authenticateClient(store: Reader, creds: ClientCredentials, certificateSha256: string | undefined): Promise<StoredRecord> {
  // A client id that is not well-formed text names no client (and PostgreSQL could not even compare it).
  if (!isWellFormedText(creds.clientId)) throw new OAuthError('invalid_client', 'Client authentication failed.', 401, creds.via === 'basic');
  const client = await store.findOne(OAUTH_CLIENTS, [{ path: 'client_id', op: 'eq', value: creds.clientId }]);
  const ok =
    client !== null &&
    (creds.via === 'certificate' ? !!certificateSha256 && client.certificate_sha256 === certificateSha256 : safeEqual(digest(creds.secret ?? ''), String(client.secret_hash)));
  if (!client || !ok) throw new OAuthError('invalid_client', 'Client authentication failed.', 401, creds.via === 'basic');
  return client;
}

const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** The scopes to grant: those requested (each allowed to the client), or the client's own. */
export function grantScopes(client: StoredRecord, requested: string | undefined): string[] {
  const allowed = (client.scopes as string[] | null) ?? [];
  if (requested === undefined || requested.trim() === '') return allowed;
  const wanted = [...new Set(requested.split(' ').filter((s) => s.length > 0))];
  for (const s of wanted) {
    if (!SCOPE_TOKEN.test(s)) throw new OAuthError('invalid_scope', `The scope ${JSON.stringify(s)} is malformed.`);
    if (allowed.length > 0 && !allowed.includes(s) && !allowed.includes('*')) throw new OAuthError('invalid_scope', `The client may not request ${s}.`);
  }
  return wanted;
}

/** What a client currently grants its tokens; null once the client is deleted. */
export interface ClientGrant {
  scopes: string[];
  /** The client's version pin (`api_version`). */
  apiVersion?: string;
}

/**
 * The client a bearer token was issued to, as it is now (cached until the credentials epoch moves): a
 * token is self-contained, but deleting its client must end it at once, not at its expiry.
 */
export async function currentClientGrant(store: CredentialReader, clientId: string, cache?: CredentialCache<ClientGrant | null>): Promise<ClientGrant | null> {
  const pending = store.credentialEpoch();
  const epoch = typeof pending === 'number' ? pending : await pending;
  const cached = cache?.get(clientId, epoch);
  if (cached !== undefined) return cached;
  const client = await store.findOne(OAUTH_CLIENTS, [{ path: 'client_id', op: 'eq', value: clientId }]);
  const pin = client?.api_version as string | null | undefined;
  const grant = client ? { scopes: (client.scopes as string[] | null) ?? [], ...(pin ? { apiVersion: pin } : {}) } : null;
  cache?.set(clientId, grant, epoch);
  return grant;
}

/**
 * The scopes a token may use now: its own, within what its client still holds (none means unrestricted on
 * either side). Undefined when nothing is left: the client was narrowed past everything the token had.
 */
export function effectiveScopes(token: string[], client: string[]): string[] | undefined {
  if (client.length === 0 || client.includes('*')) return token;
  if (token.length === 0 || token.includes('*')) return client;
  const kept = token.filter((s) => client.includes(s));
  return kept.length === token.length ? token : kept.length > 0 ? kept : undefined;
}

/** A verified client certificate registered on a client authenticates as that client (DESIGN §8). */
export async function principalForCertificate(store: Reader, certificateSha256: string): Promise<Principal | null> {
  const client = await store.findOne(OAUTH_CLIENTS, [{ path: 'certificate_sha256', op: 'eq', value: certificateSha256 }]);
  if (!client) return null;
  // A plain literal, the pin added after (see principalForApiKey's lookup: spread objects get slow shapes).
  const principal: Principal = {
    kind: 'client_certificate',
    credentialId: String(client.client_id),
    userId: null,
    role: 'admin',
    scopes: (client.scopes as string[] | null) ?? [],
  };
  const pin = client.api_version as string | null | undefined;
  if (pin) principal.apiVersion = pin;
  return principal;
}
