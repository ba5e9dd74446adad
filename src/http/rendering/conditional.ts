// Validators and conditional requests (RFC 9110 §8.8, §13): strong ETags, Last-Modified, If-Match and If-None-Match.
import * as crypto from 'node:crypto';
import type { Loaded } from '../../services/access.js';
import { CODING_SUFFIXES, entityTags as tags, etagOf, ifMatchHolds } from '../../services/etags.js';
import type { StoredRecord } from '../../store/types.js';
import type { Coding } from '../transport/content-coding.js';

// Shared with GraphQL (`etag`, `ifMatch`), so both front ends give and take one value.
export { etagOf, ifMatchHolds };

const httpDates = new Map<string, string>();

/** The HTTP-date of the last change; formatted once per timestamp (a bounded memo: hot objects are read often). */
export function lastModifiedOf(record: StoredRecord): string {
  let date = httpDates.get(record.updated_at);
  if (date === undefined) {
    if (httpDates.size >= 5000) httpDates.clear();
    date = new Date(record.updated_at).toUTCString();
    httpDates.set(record.updated_at, date);
  }
  return date;
}

/**
 * The validator of a representation sent in `coding`: a strong ETag must differ between content codings (RFC 9110
 * §8.8.3; a cache must not answer a gzip request with Brotli bytes), so `"7-v2ud"` is `"7-v2ud+br"` in Brotli and
 * `"7-v2ud+gz"` in gzip; a weak one keeps its `W/`. If-Match takes either (ifMatchHolds, src/services/etags.ts).
 */
export function codedEtag(etag: string, coding: Coding): string {
  return coding === 'identity' ? etag : `${etag.slice(0, -1)}${CODING_SUFFIXES[coding]}"`;
}

/** RFC 9110 §13.1.2: weak comparison (W/ prefixes ignored on both sides). */
export function ifNoneMatchHits(header: string, etag: string): boolean {
  const list = tags(header);
  const opaque = etag.replace(/^W\//, '');
  return list.includes('*') || list.some((t) => t.replace(/^W\//, '') === opaque);
}

/** crypto.hash where Node has it (20.12+): one call and no Hash object, whose creation was half the digest's cost. */
const sha1: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha1', text, 'base64url') : (text) => crypto.createHash('sha1').update(text).digest('base64url');

/**
 * A list page's validator (issue 17): a weak ETag over what determines the page's bytes (src/http/rendering/list-response.ts),
 * so it changes whenever anything in the page does (a row, the rows' links, the total, the next cursor) and
 * equal tags on a URL mean equal pages.
 * Weak (RFC 9110 §8.8.1) because it validates the page for If-None-Match only: a page is no stable resource
 * a client could ask for a byte range of, and nothing but revalidation reads it. SHA-1 here is a checksum, not
 * a signature: what it guards is the client's own copy.
 */
export function pageEtagOf(determinants: string): string {
  return `W/"${sha1(determinants)}"`;
}

/** Objects may be stored, but must be revalidated before reuse (their ETag makes that cheap). */
export const OBJECT_CACHE_CONTROL = 'private, no-cache';

/** RFC 9110 §13.2.2: If-None-Match wins; If-Modified-Since counts only without it. */
export function notModified(ifNoneMatch: string | undefined, ifModifiedSince: string | undefined, etag: string, record: StoredRecord): boolean {
  return ifNoneMatch !== undefined ? ifNoneMatchHits(ifNoneMatch, etag) : ifModifiedSince !== undefined && notModifiedSince(ifModifiedSince, record);
}

/** RFC 9110 §13.1.3: only whole seconds count; an unparseable date is ignored. */
export function notModifiedSince(header: string, record: StoredRecord): boolean {
  const since = Date.parse(header);
  if (Number.isNaN(since)) return false;
  return Math.floor(Date.parse(record.updated_at) / 1000) <= Math.floor(since / 1000);
}

/** RFC 9110 §13.1.4, evaluated only when If-Match is absent. */
export function unmodifiedSinceHolds(header: string | undefined, record: StoredRecord): boolean {
  if (header === undefined) return true;
  const since = Date.parse(header);
  if (Number.isNaN(since)) return true;
  return Math.floor(Date.parse(record.updated_at) / 1000) <= Math.floor(since / 1000);
}

/** The precondition a write checks inside its transaction (If-Match, else If-Unmodified-Since). */
export function writePrecondition(ifMatch: string | undefined, ifUnmodifiedSince: string | undefined, apiVersion: string): ((l: Loaded) => boolean) | undefined {
  if (ifMatch !== undefined) return (l) => ifMatchHolds(ifMatch, etagOf(l.record, l.access, apiVersion));
  if (ifUnmodifiedSince !== undefined) return (l) => unmodifiedSinceHolds(ifUnmodifiedSince, l.record);
  return undefined;
}
