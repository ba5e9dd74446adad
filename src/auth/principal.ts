// The principal: who a request acts as, whatever mechanism authenticated it; permission checks read only this.

export type CredentialKind = 'api_key' | 'system';

export interface Principal {
  kind: CredentialKind;
  /** The credential's id (an API key id). */
  credentialId: string;
  /** The user the credential acts for; null for admin keys not bound to a user. */
  userId: string | null;
  role: string;
  scopes: string[];
}

/** The principal of seeding and operator commands: an admin bound to no user. */
export const SYSTEM: Principal = { kind: 'system', credentialId: 'system', userId: null, role: 'admin', scopes: [] };
