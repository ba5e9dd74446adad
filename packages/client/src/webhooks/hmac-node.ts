// HMAC-SHA256 by Node's crypto (OpenSSL, synchronous): on Node 20, Web Crypto sends every HMAC through libuv's thread pool, which costs several times the hashing of a 1 KiB delivery.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { HmacSha256 } from './hmac.js';

export const nodeHmac: HmacSha256 = {
  importKey: async (raw) => createSecretKey(raw),
  sign: (key, content) =>
    createHmac('sha256', key as KeyObject)
      .update(content)
      .digest('base64'),
};
