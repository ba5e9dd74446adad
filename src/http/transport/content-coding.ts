// Content-coding negotiation on Accept-Encoding (RFC 9110 §12.5.3) with the `negotiator` package: which of br, gzip and identity a request accepts best.
import Negotiator from 'negotiator';
import { recentMemo } from '../../lib/recent-memo.js';

/** The codings Canon sends: Brotli, gzip, or none. */
export type Coding = 'br' | 'gzip' | 'identity';

/** What a request's Accept-Encoding allows. */
export interface Preference {
  /** The coding to send when the body is worth compressing: the highest qvalue, Brotli first on a tie, then gzip, then none. */
  best: Coding;
  /**
   * False when the request refuses identity (`identity;q=0`, or `*;q=0` without identity): then the best coding is
   * sent whatever the body's size. When it also accepts neither br nor gzip, `best` is identity all the same: RFC 9110
   * §12.5.3 lets a server disregard the field rather than refuse, and a response without coding is one every client reads.
   */
  identityAcceptable: boolean;
}

const OFFERED: Coding[] = ['br', 'gzip', 'identity'];
/** Negotiator 1.x breaks qvalue ties by `preferred`; @types/negotiator (0.6) does not declare the option. */
type Encodings = (this: Negotiator, available: readonly string[], options: { preferred: readonly string[] }) => string[];
const encodings = Negotiator.prototype.encodings as unknown as Encodings;
const IDENTITY: Preference = { best: 'identity', identityAcceptable: true };

/** The request's preference; no Accept-Encoding at all means no coding (RFC 9110 §12.5.3 allows any, identity is what every client reads). */
export function preferenceOf(acceptEncoding: string | string[] | undefined): Preference {
  if (acceptEncoding === undefined) return IDENTITY;
  // Repeated header lines are one list (RFC 9110 §5.3).
  const header = typeof acceptEncoding === 'string' ? acceptEncoding : acceptEncoding.join(', ');
  return negotiated(header);
}

/** Preferences for recent Accept-Encoding values: clients send a handful of spellings (`gzip, deflate, br`, `br, gzip`, …). */
const negotiated = recentMemo((header: string): Preference => {
  // Coding names are case-insensitive, and `x-gzip` is gzip (RFC 9110 §8.4.1.3).
  const normalized = header.toLowerCase().replace(/(^|[\s,])x-gzip(?=$|[\s,;])/g, '$1gzip');
  const accepted = encodings.call(new Negotiator({ headers: { 'accept-encoding': normalized } }), OFFERED, { preferred: OFFERED }) as Coding[];
  return { best: accepted[0] ?? 'identity', identityAcceptable: accepted.includes('identity') };
});
