// Random secrets, their digests and constant-time comparison, shared by every credential type.
// A namespace import: a named import of `hash` would fail to link on Node versions before 20.12.
import * as crypto from 'node:crypto';
const { createHash, randomBytes, timingSafeEqual } = crypto;

/** crypto.hash (Node 20.12+) is the one-shot form: a third of createHash's cost, and this runs on every keyed request. */
const sha256 =
  typeof crypto.hash === 'function'
    ? (data: string): string => crypto.hash('sha256', data, 'base64url')
    : (data: string): string => createHash('sha256').update(data).digest('base64url');

/** `prefix` + 256 random bits, base64url. */
export function randomSecret(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/**
 * SHA-256 digest, base64url. Enough for secrets with 256 bits of entropy (keys, client secrets,
 * session ids): they cannot be guessed offline the way passwords can, so no slow KDF is needed.
 */
export function digest(secret: string): string {
  return sha256(secret);
}

/** Compares in constant time whatever the lengths (both sides are hashed to 32 bytes first), never throwing. */
export function safeEqual(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y) && a.length === b.length;
}
