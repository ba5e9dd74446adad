// The principal: who a request acts as, whatever mechanism authenticated it; permission checks read only this.

export type CredentialKind = 'api_key' | 'bearer' | 'client_certificate' | 'session' | 'system';

export interface Principal {
  kind: CredentialKind;
  /** The credential's id (an API key id). */
  credentialId: string;
  /** The user the credential acts for; null for admin keys not bound to a user. */
  userId: string | null;
  role: string;
  /** Empty means unrestricted; otherwise `{resource}:read`, `{resource}:write` or `*` (DESIGN §8). */
  scopes: string[];
  /** The release date of the version the credential is pinned to (API keys, OAuth clients), for CANON_VERSIONING=date. */
  apiVersion?: string;
  /** Set for cookie sessions only: what CSRF checks and logout need. */
  session?: { id: string; csrfToken: string };
}

/** The principal of seeding and operator commands: an admin bound to no user. */
export const SYSTEM: Principal = { kind: 'system', credentialId: 'system', userId: null, role: 'admin', scopes: [] };
