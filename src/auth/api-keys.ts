// API keys: `ck_` secrets with 256 random bits, stored as SHA-256 digests, resolved to a Principal per request.
import type { Principal } from '../model/principal.js';
import type { CredentialCache } from './credential-cache.js';
import { API_KEYS, hashApiKey } from '../platform/api-key-secrets.js';
import type { Reader, Store } from '../store/types.js';

const KEY_SHAPE = /^ck_[A-Za-z0-9_-]{20,100}$/;

/** What authentication reads: records, and the credentials epoch that says whether a cached credential still holds. */
export type CredentialReader = Reader & Pick<Store, 'credentialEpoch' | 'credentialEpochNow'>;

/** Resolves a presented secret to its principal, or null when it is malformed, unknown or its user is gone. */
export async function principalForApiKey(store: CredentialReader, usersResource: string, secret: string, cache?: CredentialCache<Principal>): Promise<Principal | null> {
  if (!KEY_SHAPE.test(secret)) return null;
  // Read before the look-up: a change committed during it leaves the entry at an old epoch (CredentialCache).
  const pending = store.credentialEpoch();
  const epoch = typeof pending === 'number' ? pending : await pending;
  // The cache is keyed by the presented key itself, which the process holds for each request anyway:
  // hashing it was a tenth of a cached GET. Only the digest is ever stored or compared in the database.
  const cached = cache?.get(secret, epoch);
  if (cached) return cached;
  const principal = await lookup(store, usersResource, hashApiKey(secret));
  if (principal) cache?.set(secret, principal, epoch);
  return principal;
}

/**
 * The principal a presented key is cached as at the store's current credentials epoch, when that epoch is known
 * without waiting (a number); undefined when only principalForApiKey can tell. Only keys found once are cached.
 */
export function cachedPrincipalForApiKey(store: CredentialReader, secret: string, cache: CredentialCache<Principal>): Principal | undefined {
  // Not credentialEpoch: on PostgreSQL it sends a read, which principalForApiKey would then send again (issue 31.3:
  // two epoch reads per GET by id).
  const epoch = store.credentialEpochNow?.();
  return epoch === undefined ? undefined : cache.get(secret, epoch);
}

async function lookup(store: Reader, usersResource: string, hash: string): Promise<Principal | null> {
  const key = await store.findOne(API_KEYS, [{ path: 'key_hash', op: 'eq', value: hash }]);
  if (!key) return null;
  const userId = (key.user_id as string | null) ?? null;
  let role = 'admin';
  if (userId) {
    const user = await store.get(usersResource, userId);
    if (!user) return null;
    role = String(user.role);
  }
  // A plain literal, the pin added after: an object built by spreading gets a slow shape in V8, and a principal
  // is read on every request (measured: +6 % CPU per cached GET by id).
  const principal: Principal = { kind: 'api_key', credentialId: key.id, userId, role, scopes: (key.scopes as string[] | null) ?? [] };
  const pin = key.api_version as string | null | undefined;
  if (pin) principal.apiVersion = pin;
  return principal;
}
