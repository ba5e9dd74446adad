// Keys derived from CANON_SECRET (HKDF-SHA256), and AES-256-GCM sealing of what must be kept secret at rest (signing keys, revealed secrets).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const derived = new Map<string, Buffer>();

/**
 * A 256-bit key for one purpose, derived from CANON_SECRET with HKDF-SHA256 (RFC 5869): each use of the
 * secret gets its own key. Derived once per secret and purpose: deriving on every seal cost more than the
 * encryption itself.
 */
export function deriveKey(secret: string, purpose: string): Buffer {
  const id = `${purpose}\n${secret}`;
  let key = derived.get(id);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', secret, 'canon', purpose, 32));
    derived.set(id, key);
  }
  return key;
}

function keyFrom(secret: string): Buffer {
  return deriveKey(secret, 'canon signing keys v1');
}

export function seal(plaintext: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFrom(secret), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

export function open(sealed: string, secret: string): string {
  const raw = Buffer.from(sealed, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', keyFrom(secret), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
