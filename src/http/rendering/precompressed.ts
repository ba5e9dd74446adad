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

export interface Precompressed {
  variants: Record<Coding, Variant>;
}

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

/** The variant the request accepts (Brotli first, then gzip, then none; src/http/transport/content-coding.ts); identity when it names no coding. */
export function choose(p: Precompressed, acceptEncoding: string | undefined): Variant {
  return p.variants[preferenceOf(acceptEncoding).best];
}
