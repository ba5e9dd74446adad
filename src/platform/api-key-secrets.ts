// The API key's secret format: `ck_` and 256 random bits, stored as a SHA-256 digest with a short visible prefix.
import { digest, randomSecret } from '../lib/secrets.js';

export const API_KEYS = 'api-keys';

export function generateApiKey(): string {
  return randomSecret('ck_');
}

/** Keys have 256 bits of entropy, so a SHA-256 digest is enough (passwords get scrypt instead). */
export function hashApiKey(secret: string): string {
  return digest(secret);
}

/** The non-secret prefix shown in listings so people can tell their keys apart. */
export function keyPrefix(secret: string): string {
  return secret.slice(0, 10);
}
