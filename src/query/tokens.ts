// Opaque, tamper-evident tokens for cursors: base64url JSON plus a truncated HMAC-SHA256 over it.
import { createHmac, timingSafeEqual } from 'node:crypto';

const MAC_BYTES = 16;

function mac(body: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(body).digest().subarray(0, MAC_BYTES);
}

export function signToken(payload: unknown, secret: string): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${mac(body, secret).toString('base64url')}`;
}

/** Returns the payload, or undefined for anything forged, truncated, foreign or malformed. */
export function verifyToken(token: string, secret: string): unknown {
  if (token.length > 2048) return undefined;
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  const body = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = mac(body, secret);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
