// A large body that never changes (an OpenAPI document), kept as identity, gzip and Brotli bytes, each with its own strong ETag, chosen by Accept-Encoding (RFC 9110 §12.5.3).
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import Negotiator from 'negotiator';

export type Coding = 'br' | 'gzip' | 'identity';

export interface Variant {
  coding: Coding;
  bytes: Buffer;
  /** Strong, and distinct per coding: a cache must not answer a gzip request with Brotli bytes (RFC 9110 §8.8.3). */
  etag: string;
}

export interface Precompressed {
  variants: Record<Coding, Variant>;
}

const CODINGS: Coding[] = ['br', 'gzip', 'identity'];

function variant(coding: Coding, bytes: Buffer): Variant {
  return { coding, bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url')}"` };
}

/** Compressed once, at their best settings: the cost is paid at the first request, never again. */
export function precompress(body: string): Precompressed {
  const identity = Buffer.from(body);
  return {
    variants: {
      identity: variant('identity', identity),
      gzip: variant('gzip', gzipSync(identity, { level: 9 })),
      br: variant('br', brotliCompressSync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length } })),
    },
  };
}

/**
 * Codings chosen for recent Accept-Encoding values: clients send a handful of spellings (`gzip, deflate, br`,
 * `br, gzip`, …) and negotiating costs more than sending the bytes' headers. Bounded: emptied when full.
 */
const chosen = new Map<string, Coding>();
const CHOSEN_KEPT = 256;

/** The variant the request accepts (Brotli first, then gzip, then none); identity when it names no coding. */
export function choose(p: Precompressed, acceptEncoding: string | undefined): Variant {
  if (acceptEncoding === undefined) return p.variants.identity;
  let coding = chosen.get(acceptEncoding);
  if (coding === undefined) {
    if (chosen.size >= CHOSEN_KEPT) chosen.clear();
    coding = (new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }).encoding(CODINGS) as Coding | undefined) ?? 'identity';
    chosen.set(acceptEncoding, coding);
  }
  return p.variants[coding];
}
