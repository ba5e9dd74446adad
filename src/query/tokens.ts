// Opaque, tamper-evident tokens for cursors: base64url JSON plus a truncated HMAC-SHA256 over it.
import { createHmac, timingSafeEqual } from 'node:crypto';

const MAC_BYTES = 16;

function mac(body: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(body).digest().subarray(0, MAC_BYTES);
}

/** Tokens kept per secret, each way; tokens longer than this (long sort keys) are not kept. */
const KNOWN_MAX = 4_096;
const KNOWN_TOKEN_MAX = 512;
/** Secrets with tokens kept: one per app, a few in a process that builds several (tests). */
const SECRETS_MAX = 8;

/**
 * Tokens this process signed or verified under one secret, with their payload's JSON: a token found here is
 * genuine, so verifying it needs no MAC, and a payload signed again needs none either. A cursor walk verifies one
 * token and signs the next on every page (every URL new), and the HMAC's object, digest and base64 were about 6%
 * of an uncached cursor page's CPU (issue 31, docs/BENCHMARKS.md). A token is a function of its payload and the
 * secret (no expiry, no nonce), so what is kept is exactly what the MAC would say; a forged token is never kept,
 * only ones that passed the MAC or were made here. Bounded: the oldest go first.
 */
class KnownTokens {
  /** Token → its payload's JSON. */
  readonly payloads = new Map<string, string>();
  /** Payload JSON → its token. */
  readonly tokens = new Map<string, string>();

  keep(token: string, json: string): void {
    if (token.length > KNOWN_TOKEN_MAX) return;
    if (this.payloads.size >= KNOWN_MAX) this.payloads.delete(this.payloads.keys().next().value!);
    if (this.tokens.size >= KNOWN_MAX) this.tokens.delete(this.tokens.keys().next().value!);
    this.payloads.set(token, json);
    this.tokens.set(json, token);
  }
}

const known = new Map<string, KnownTokens>();

function knownFor(secret: string): KnownTokens {
  let k = known.get(secret);
  if (k === undefined) {
    if (known.size >= SECRETS_MAX) known.delete(known.keys().next().value!);
    known.set(secret, (k = new KnownTokens()));
  }
  return k;
}

export function signToken(payload: unknown, secret: string): string {
  const json = JSON.stringify(payload);
  const k = knownFor(secret);
  const kept = k.tokens.get(json);
  if (kept !== undefined) return kept;
  const body = Buffer.from(json).toString('base64url');
  const token = `${body}.${mac(body, secret).toString('base64url')}`;
  k.keep(token, json);
  return token;
}

/** Returns the payload (a new object every call), or undefined for anything forged, truncated, foreign or malformed. */
export function verifyToken(token: string, secret: string): unknown {
  if (token.length > 2048) return undefined;
  const k = knownFor(secret);
  const kept = k.payloads.get(token);
  if (kept !== undefined) return JSON.parse(kept);
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  const body = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = mac(body, secret);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const json = Buffer.from(body, 'base64url').toString('utf8');
  let payload: unknown;
  try {
    payload = JSON.parse(json);
  } catch {
    return undefined;
  }
  // Only the token as made verifies from memory: base64url has other spellings of the same bytes (trailing bits), which
  // go through the MAC every time, as before.
  if (token === `${body}.${expected.toString('base64url')}`) k.keep(token, json);
  return payload;
}

/** Tokens kept for `secret` (tests). */
export function knownTokens(secret: string): number {
  return known.get(secret)?.payloads.size ?? 0;
}
