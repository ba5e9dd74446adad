// The HMAC-SHA256 that verifyWebhook signs with: Web Crypto everywhere by default, Node's synchronous crypto when the package is loaded under Node (src/node.ts).

/** A secret's key, prepared once, and the MAC of signed content as standard base64 (RFC 4648 §4), as `webhook-signature` carries it. */
export interface HmacSha256 {
  importKey(raw: Uint8Array<ArrayBuffer>): Promise<unknown>;
  /**
   * Takes what it needs of `content` before it returns (verify.ts reuses the buffer for the next delivery):
   * Web Crypto copies it when `sign` is called, Node's HMAC digests it at once.
   */
  sign(key: unknown, content: Uint8Array<ArrayBuffer>): string | Promise<string>;
}

/** The secret key type of Web Crypto, named without the DOM's `CryptoKey` so the module compiles under Node's types too. */
type WebKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * Standard padded base64 (RFC 4648 §4) of a MAC. Not btoa: it needs a binary string first, and the two together
 * cost more than the rest of a verification but the HMAC.
 */
export function base64(buffer: ArrayBuffer): string {
  const bytes = new Uint8Array(buffer);
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  if (i < bytes.length) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + (i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63]! : '=') + '=';
  }
  return out;
}

/** Browsers, Deno, workers, and Node when the package's browser entry is loaded. */
export const webCryptoHmac: HmacSha256 = {
  // Extractable false: the key object never gives its bytes back.
  importKey: (raw) => crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
  sign: async (key, content) => base64(await crypto.subtle.sign('HMAC', key as WebKey, content)),
};

let current: HmacSha256 = webCryptoHmac;

/** The implementation verifications use now. */
export function hmac(): HmacSha256 {
  return current;
}

/**
 * Replaces the implementation (src/node.ts does, when Node loads the package): keys already prepared by the
 * other one are prepared again on their next use (verify.ts keeps each key with the implementation it is for).
 */
export function useHmac(impl: HmacSha256): void {
  current = impl;
}
