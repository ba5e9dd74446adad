// verifyWebhook: checks a Canon delivery per Standard Webhooks (standardwebhooks.com, "Verifying webhook authenticity") with HMAC-SHA256 (Web Crypto, or Node's crypto under Node: src/webhooks/hmac.ts), constant-time, within a timestamp tolerance.
import type { WebhookEvent } from '../event.js';
import { hmac, type HmacSha256 } from './hmac.js';

/** Why a delivery was refused: the machine-readable part of {@link WebhookVerificationError}. */
export type WebhookVerificationReason =
  /** `webhook-id`, `webhook-timestamp` or `webhook-signature` is absent or empty. */
  | 'missing_headers'
  /** `webhook-timestamp` is not whole Unix seconds. */
  | 'invalid_timestamp'
  /** Signed longer ago than the tolerance: a replay, or a clock far off. */
  | 'timestamp_too_old'
  /** Signed further in the future than the tolerance. */
  | 'timestamp_too_new'
  /** No `v1,` signature in `webhook-signature` matches any secret: forged, tampered with, or another secret. */
  | 'no_matching_signature'
  /** Authentic, but the body is not a JSON event (never sent by Canon). */
  | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

/** Request headers as Node (`req.headers`, lower-case names), a plain object, or fetch's `Headers` give them. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** One endpoint secret, or several (while you move to a rotated secret, or for several endpoints): any that verifies accepts. */
export type WebhookSecrets = { secret: string; secrets?: undefined } | { secrets: readonly string[]; secret?: undefined };

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now, in seconds, either way (default 300: the spec's 5 minutes). */
  tolerance?: number;
  /** The current time in milliseconds since the epoch (default `Date.now`): inject a clock in tests. */
  now?: () => number;
}

export type VerifyWebhookInput = WebhookSecrets &
  VerifyOptions & {
    headers: WebhookHeaders;
    /** The body exactly as received: the signature covers its bytes, so a body parsed and serialised again does not verify. */
    body: string | Uint8Array;
  };

/** Prepared keys, with the implementation they were prepared by (src/webhooks/hmac.ts). */
interface HmacKeys {
  impl: HmacSha256;
  keys: unknown[];
}

const PREFIX = 'whsec_';
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;
/** Canonical base64 (RFC 4648 §4), the encoding of the secret after `whsec_`. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Whole Unix seconds; 15 digits reach far past any real clock and stay an exact number. */
const SECONDS = /^\d{1,15}$/;
const encoder = new TextEncoder();

/**
 * The raw HMAC key of a secret: the spec signs with the base64-decoded bytes after `whsec_`, not the text (the
 * prefix is optional here, as in the official libraries). Throws a TypeError on a malformed secret: a
 * configuration mistake, not a forged delivery.
 */
export function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  if (typeof secret !== 'string') throw new TypeError('a webhook secret is a string: whsec_ followed by base64');
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  if (encoded.length === 0 || !BASE64.test(encoded)) throw new TypeError('a webhook secret is whsec_ followed by base64 (the secret shown when the endpoint was created)');
  const text = atob(encoded);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

async function importKeys(secrets: readonly string[]): Promise<HmacKeys> {
  const impl = hmac();
  return { impl, keys: await Promise.all(secrets.map((s) => impl.importKey(secretBytes(s)))) };
}

/** `keys` if they are the current implementation's, else prepared again (useHmac after the first use). */
function current(keys: Promise<HmacKeys>, secrets: () => readonly string[], again: (k: Promise<HmacKeys>) => void): Promise<HmacKeys> {
  return keys.then((k) => {
    if (k.impl === hmac()) return k;
    const fresh = importKeys(secrets());
    again(fresh);
    return fresh;
  });
}

/** A header's value, whatever the headers' form; repeated headers joined by spaces (webhook-signature: one signature each). */
export function header(headers: WebhookHeaders, name: string): string | undefined {
  let value: string | readonly string[] | null | undefined;
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') value = (headers as Headers).get(name);
  else {
    const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
    value = record[name];
    if (value === undefined) for (const key of Object.keys(record)) if (key.toLowerCase() === name) value = record[key];
  }
  if (value === null || value === undefined) return undefined;
  const text = typeof value === 'string' ? value : value.join(' ');
  return text === '' ? undefined : text;
}

/** Compares in time that depends on the lengths only (both are 44 characters for SHA-256), never on where they differ (conventions spec §6, item 6). */
function equalConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * A buffer reused for what is signed, so that a verification allocates no copy of the body. Safe across
 * concurrent verifications because Web Crypto copies the data when `sign` is called, before it returns (W3C Web
 * Cryptography API, SubtleCrypto.sign: "Let data be the result of getting a copy of the bytes held by the data
 * parameter"), and every `sign` of one verification is called before anything is awaited. Bodies larger than
 * SCRATCH_MAX get a buffer of their own.
 */
const SCRATCH_MAX = 256 * 1024;
let scratch = new Uint8Array(4096);

/** What was signed, `{id}.{timestamp}.{body}`, as UTF-8 bytes; a byte body is copied as is (no decoding, no re-encoding). */
function signedContent(id: string, timestamp: string, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = `${id}.${timestamp}.`;
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  const most = (prefix.length + (typeof body === 'string' ? body.length : 0)) * 3 + (typeof body === 'string' ? 0 : body.length);
  const target = most <= SCRATCH_MAX ? (scratch.length >= most ? scratch : (scratch = new Uint8Array(Math.max(most, scratch.length * 2)))) : new Uint8Array(most);
  let length = encoder.encodeInto(prefix, target).written;
  if (typeof body === 'string') length += encoder.encodeInto(body, target.subarray(length)).written;
  else {
    target.set(body, length);
    length += body.length;
  }
  return target.subarray(0, length);
}

function parsePayload<T>(body: string | Uint8Array): T {
  let value: unknown;
  try {
    value = JSON.parse(typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The delivery is signed but its body is not JSON.');
  }
  const event = value as { id?: unknown; type?: unknown } | null;
  if (typeof event !== 'object' || event === null || typeof event.id !== 'string' || typeof event.type !== 'string') {
    throw new WebhookVerificationError('invalid_payload', 'The delivery is signed but its body is not an event (an object with an id and a type).');
  }
  return value as T;
}

export type Verify = <T = WebhookEvent>(headers: WebhookHeaders, body: string | Uint8Array) => Promise<T>;

/** One delivery checked against a set of keys: headers, the timestamp window, then the signatures (spec "Verifying webhook authenticity"). */
async function check<T>(keys: Promise<HmacKeys>, tolerance: number, now: () => number, headers: WebhookHeaders, body: string | Uint8Array): Promise<T> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signature = header(headers, 'webhook-signature');
  if (id === undefined || timestamp === undefined || signature === undefined) {
    throw new WebhookVerificationError('missing_headers', 'The delivery lacks webhook-id, webhook-timestamp or webhook-signature.');
  }
  if (!SECONDS.test(timestamp)) throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not whole Unix seconds.');
  // Replay protection: the timestamp is signed, so it cannot be moved into the window.
  const age = Math.floor(now() / 1000) - Number(timestamp);
  if (age > tolerance) throw new WebhookVerificationError('timestamp_too_old', `The delivery was signed ${age} s ago, more than the ${tolerance} s allowed.`);
  if (-age > tolerance) throw new WebhookVerificationError('timestamp_too_new', `The delivery is signed ${-age} s in the future, more than the ${tolerance} s allowed.`);
  // "v1,<base64>" entries, space-separated; other versions (v1a: asymmetric) are not ours to check.
  const candidates = signature
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => s.slice(3));
  if (candidates.length > 0) {
    const { impl, keys: list } = await keys;
    const content = signedContent(id, timestamp, body);
    // One HMAC per secret, compared with every candidate (not one per pair); all started before any await (see scratch).
    const first = impl.sign(list[0], content);
    const macs = list.length === 1 ? [await first] : await Promise.all([first, ...list.slice(1).map((key) => impl.sign(key, content))]);
    let match = false;
    for (const expected of macs) {
      for (const candidate of candidates) match = equalConstantTime(candidate, expected) || match;
    }
    if (match) return parsePayload<T>(body);
  }
  throw new WebhookVerificationError(
    'no_matching_signature',
    'No signature of the delivery matches the secret: it was not signed by Canon with this endpoint’s secret, or it was changed.',
  );
}

function toleranceOf(options: VerifyOptions): number {
  const tolerance = options.tolerance ?? DEFAULT_TOLERANCE_SECONDS;
  if (!(tolerance >= 0)) throw new RangeError(`tolerance is a number of seconds, not ${tolerance}`);
  return tolerance;
}

/**
 * A verifier for a fixed set of secrets, their keys imported once (on first use): what the handler uses.
 * Secrets are checked here, at once (TypeError when one is malformed).
 */
export function createVerifier(secrets: WebhookSecrets, options: VerifyOptions = {}): Verify {
  const list = secretList(secrets);
  const tolerance = toleranceOf(options);
  const now = options.now ?? Date.now;
  let keys: Promise<HmacKeys> | undefined;
  const again = (k: Promise<HmacKeys>): void => void (keys = k);
  return <T = WebhookEvent>(headers: WebhookHeaders, body: string | Uint8Array) =>
    check<T>(
      current((keys ??= importKeys(list)), () => list, again),
      tolerance,
      now,
      headers,
      body,
    );
}

function secretList(secrets: WebhookSecrets): string[] {
  const list = secrets.secrets !== undefined ? [...secrets.secrets] : secrets.secret !== undefined ? [secrets.secret] : [];
  if (list.length === 0) throw new TypeError('verifying a webhook takes a secret, or secrets (at least one)');
  for (const s of list) secretBytes(s);
  return list;
}

/**
 * Imported key sets by their secrets, so that repeated calls of verifyWebhook neither check nor import them
 * again (a secret holds no space, so the joined list names the set); a few endpoints' worth, oldest out first.
 */
const KEY_CACHE_SIZE = 32;
const keyCache = new Map<string, Promise<HmacKeys>>();

function cachedKeys(secrets: WebhookSecrets): Promise<HmacKeys> {
  const name = secrets.secrets !== undefined ? secrets.secrets.join(' ') : (secrets.secret ?? '');
  let keys = keyCache.get(name);
  if (keys === undefined) {
    keys = importKeys(secretList(secrets));
    keyCache.set(name, keys);
    if (keyCache.size > KEY_CACHE_SIZE) keyCache.delete(keyCache.keys().next().value!);
  }
  return current(
    keys,
    () => secretList(secrets),
    (k) => keyCache.set(name, k),
  );
}

/**
 * Verifies one delivery and returns its event, or throws {@link WebhookVerificationError} (its `reason` says
 * why; answer 401). Pass the raw body (string or bytes) as received and the request's headers. A malformed
 * secret is a TypeError. Deduplicate by `webhook-id` yourself, or use createWebhookHandler, which does.
 *
 * ```ts
 * const event = await verifyWebhook({ secret: process.env.CANON_WEBHOOK_SECRET!, headers: req.headers, body: rawBody });
 * ```
 */
export function verifyWebhook<T = WebhookEvent>(input: VerifyWebhookInput): Promise<T> {
  try {
    return check<T>(cachedKeys(input), toleranceOf(input), input.now ?? Date.now, input.headers, input.body);
  } catch (err) {
    return Promise.reject(err as Error);
  }
}
