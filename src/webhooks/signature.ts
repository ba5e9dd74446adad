// Standard Webhooks signing (https://www.standardwebhooks.com, spec "Signature scheme"): `whsec_` secrets and the webhook-id / webhook-timestamp / webhook-signature headers.
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';
/** Standard Webhooks: "The secret key SHOULD be between 24 bytes (192 bits) and 64 bytes (512 bits)". */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
/** Canonical base64 (RFC 4648 §4): standard alphabet, padded to a multiple of four characters. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** A header value that needs no quoting and cannot split a header (no spaces, no control characters). */
const TOKEN = /^[\x21-\x7e]+$/;

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (256 bits, inside the spec's 24–64 byte range). */
export function generateWebhookSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The raw HMAC key of a `whsec_…` secret: the spec signs with the base64-decoded bytes, not the text. Throws on a malformed secret. */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(PREFIX)) throw new Error(`a webhook secret starts with ${PREFIX}`);
  const encoded = secret.slice(PREFIX.length);
  // Buffer.from(…, 'base64') skips characters it does not know; a strict check first, so a damaged secret fails loudly.
  if (encoded.length === 0 || !BASE64.test(encoded)) throw new Error('a webhook secret is whsec_ followed by base64');
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) throw new Error(`a webhook secret holds ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes, not ${key.length}`);
  return key;
}

/** `v1,` + base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}")): the spec's symmetric signature, version 1. */
function sign(key: Buffer, content: string): string {
  return `v1,${createHmac('sha256', key).update(content, 'utf8').digest('base64')}`;
}

/**
 * The three Standard Webhooks headers for one message. `timestamp` is Unix seconds (the receiver rejects it
 * outside its tolerance, replay protection). One `v1,` signature per secret, space-separated in the order given:
 * during a secret rotation (DESIGN §9) both the new and the old secret sign, and a receiver holding either accepts.
 */
export function signatureHeaders(input: { id: string; timestamp: number; body: string; secrets: readonly string[] }): SignatureHeaders {
  if (!TOKEN.test(input.id)) throw new Error('a webhook id is non-empty printable ASCII without spaces');
  if (!Number.isSafeInteger(input.timestamp) || input.timestamp < 0) throw new Error(`a webhook timestamp is whole Unix seconds, not ${input.timestamp}`);
  if (input.secrets.length === 0) throw new Error('a webhook is signed with at least one secret');
  const content = `${input.id}.${input.timestamp}.${input.body}`;
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': input.secrets.map((secret) => sign(secretKey(secret), content)).join(' '),
  };
}
