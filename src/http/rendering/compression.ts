// Response compression (issue 31.5): which content coding a response gets (Accept-Encoding, its size, its type), its bytes in that coding, and the Vary and ETag that go with it.
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Config } from '../../config/config.js';
import { preferenceOf, type Coding } from '../transport/content-coding.js';

export type { Coding } from '../transport/content-coding.js';

/**
 * Brotli at quality 4 and gzip at level 6 (zlib's default): settings for compressing per request (Brotli's 11 is for
 * static files, many times slower; @fastify/compress defaults to 4 for the same reason). A 20-item page (11 KB of JSON) shrinks about nine times for ~200 µs of CPU in either (bench/compression.mjs,
 * docs/BENCHMARKS.md). Documents compressed once (src/http/rendering/precompressed.ts) use the best settings instead.
 */
const BROTLI_QUALITY = 4;
const GZIP_LEVEL = 6;
/** Bodies up to this size are compressed with a 16 KB window: a window larger than the body only costs memory to set up. */
const SMALL = 16 * 1024;

/**
 * Types worth compressing: text (not an event stream, which must flow as written), JSON and every `+json` type
 * (problem+json, graphql-response+json, the media-type strategy's vnd.canon.v2+json), JavaScript and XML.
 */
const COMPRESSIBLE = /^(?:text\/(?!event-stream)[\w.+-]+|application\/(?:json|javascript|xml|[\w.-]+\+(?:json|xml))|image\/svg\+xml)\s*(?:;|$)/i;

/** What the memo of compressed texts may hold (texts and their compressed bytes): emptied when past it. */
const MEMO_BYTES = 16 * 1024 * 1024;

const byConfig = new WeakMap<Config, Compression>();

export class Compression {
  /** The one instance for a configuration: the Fastify routes and the lean read path share its memo. */
  static of(config: Config): Compression {
    let c = byConfig.get(config);
    if (c === undefined) byConfig.set(config, (c = new Compression(config.compression, config.compressionThresholdBytes)));
    return c;
  }

  /**
   * Compressed bytes of rendered texts that are sent again and again (an object, a page the list cache holds), by
   * coding then text: compressing once per rendering costs less than once per request (docs/BENCHMARKS.md).
   */
  private readonly texts: Record<'br' | 'gzip', Map<string, Buffer>> = { br: new Map(), gzip: new Map() };
  private textBytes = 0;
  /** Compressed bytes of bodies prepared once (the /docs page and its assets), kept as long as the body is. */
  private readonly buffers = new WeakMap<Buffer, Partial<Record<Coding, Buffer>>>();

  constructor(
    /** CANON_COMPRESSION: off sends every response as rendered (the OpenAPI documents keep their precompressed variants). */
    readonly enabled: boolean,
    /** CANON_COMPRESSION_THRESHOLD: bodies smaller than this are sent as they are, unless the request refuses identity. */
    readonly threshold: number,
  ) {}

  /** Whether a response of this type is compressed at all (and so varies with Accept-Encoding). */
  compressible(contentType: string): boolean {
    return this.enabled && COMPRESSIBLE.test(contentType);
  }

  /**
   * The coding a compressible body is sent in: the request's preferred one (RFC 9110 §12.5.3), unless the body is
   * below the threshold and the request accepts it as it is. Requests without Accept-Encoding cost one comparison.
   */
  codingFor(acceptEncoding: string | string[] | undefined, body: string | Buffer): Coding {
    if (acceptEncoding === undefined || !this.enabled) return 'identity';
    const preference = preferenceOf(acceptEncoding);
    if (preference.best === 'identity') return 'identity';
    if (preference.identityAcceptable && (typeof body === 'string' ? Buffer.byteLength(body) : body.length) < this.threshold) return 'identity';
    return preference.best;
  }

  /** `body` in `coding`; `memo`: the body is a rendering that will be sent again (see `texts`). */
  encode(body: string | Buffer, coding: Coding, memo = false): Buffer {
    if (coding === 'identity') return typeof body === 'string' ? Buffer.from(body) : body;
    if (typeof body !== 'string') {
      let variants = this.buffers.get(body);
      if (variants === undefined) this.buffers.set(body, (variants = {}));
      return (variants[coding] ??= compress(body, coding));
    }
    if (!memo) return compress(body, coding);
    const texts = this.texts[coding];
    let bytes = texts.get(body);
    if (bytes === undefined) {
      bytes = compress(body, coding);
      // Counted by text length: a bound on memory, not an exact figure (a character may take up to three bytes).
      this.textBytes += body.length + bytes.length;
      if (this.textBytes > MEMO_BYTES) {
        this.texts.br.clear();
        this.texts.gzip.clear();
        this.textBytes = body.length + bytes.length;
      }
      texts.set(body, bytes);
    }
    return bytes;
  }
}

/**
 * Each call sets up its own compressor: told the body's size (Brotli's size hint, zlib's window), it allocates what
 * that body needs rather than the 4 MB (Brotli) or 256 KB (zlib) a stream of unknown length gets.
 */
function compress(body: string | Buffer, coding: 'br' | 'gzip'): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  if (coding === 'br') return brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } });
  return gzipSync(bytes, bytes.length <= SMALL ? { level: GZIP_LEVEL, windowBits: 14, memLevel: 7 } : { level: GZIP_LEVEL });
}

/** A response's Vary with Accept-Encoding added (RFC 9110 §12.5.5): the field Canon's other Vary values (the version's header) stay. */
export function varyWithAcceptEncoding(vary: unknown): string {
  if (typeof vary !== 'string' || vary === '') return 'Accept-Encoding';
  return /(^|,)\s*accept-encoding\s*(,|$)/i.test(vary) ? vary : `${vary}, Accept-Encoding`;
}
