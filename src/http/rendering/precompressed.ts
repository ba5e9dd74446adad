// A large body that never changes (an OpenAPI document), kept as identity, gzip and Brotli bytes, each with its own strong ETag, chosen by Accept-Encoding (RFC 9110 §12.5.3).
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { preferenceOf, type Coding } from '../transport/content-coding.js';

export type { Coding } from '../transport/content-coding.js';

export interface Variant {
  coding: Coding;
  bytes: Buffer;
  /** Strong, and distinct per coding: a cache must not answer a gzip request with Brotli bytes (RFC 9110 §8.8.3). */
  etag: string;
}

/** A body's three variants, each made when first asked for. */
export interface Precompressed {
  variant(coding: Coding): Variant;
}

function variant(coding: Coding, bytes: Buffer): Variant {
  return { coding, bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url')}"` };
}

function encode(identity: Buffer, coding: Exclude<Coding, 'identity'>): Buffer {
  if (coding === 'gzip') return gzipSync(identity, { level: 9 });
  return brotliCompressSync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length } });
}

/**
 * Bodies by their identity ETag, in this process: apps built from the same model and configuration render the same
 * document, whose Brotli at quality 11 is tens of milliseconds of CPU (the test suite builds thousands of apps, and
 * compressing their documents was a fiftieth of its CPU). Bounded: when full, it starts over.
 */
const shared = new Map<string, Precompressed>();
const SHARED_BODIES = 32;

/**
 * Compressed at their best settings, each coding once and only when a request first asks for it: a client that
 * never sends Accept-Encoding never pays for Brotli.
 */
export function precompress(body: string): Precompressed {
  const identity = variant('identity', Buffer.from(body));
  const known = shared.get(identity.etag);
  if (known !== undefined) return known;
  const made: Partial<Record<Coding, Variant>> = { identity };
  const p: Precompressed = {
    variant: (coding) => (made[coding] ??= variant(coding, encode(identity.bytes, coding as Exclude<Coding, 'identity'>))),
  };
  if (shared.size >= SHARED_BODIES) shared.clear();
  shared.set(identity.etag, p);
  return p;
}

/** The variant the request accepts (Brotli first, then gzip, then none; src/http/transport/content-coding.ts); identity when it names no coding. */
export function choose(p: Precompressed, acceptEncoding: string | undefined): Variant {
  return p.variant(preferenceOf(acceptEncoding).best);
}
