// Validators and conditional requests (RFC 9110 §8.8, §13): strong ETags, Last-Modified, If-Match and If-None-Match.
import * as crypto from 'node:crypto';
import type { Access, Loaded } from '../../services/access.js';
import type { StoredRecord } from '../../store/types.js';
import type { Coding } from '../transport/content-coding.js';

/**
 * A strong ETag: it changes with every write (the version counter) and with every change of
 * representation (the API version and the links this caller sees), so equal tags mean identical
 * bodies. ETags compare per URL, so the id need not be part of it; nothing is hashed per request.
 */
export function etagOf(record: StoredRecord, access: Access, apiVersion: string): string {
  return `"${record.version}-${apiVersion}${access.update ? 'u' : ''}${access.delete ? 'd' : ''}${access.actions.length ? `-${access.actions.join('.')}` : ''}"`;
}

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

/** Splits an If-Match / If-None-Match list; `*` is returned as the only element. */
function tags(header: string): string[] {
  return header
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
}

/** What a coded tag appends to the identity tag: `+` is in no tag Canon makes otherwise (counters, `v2`, action names, base64url digests). */
const CODING_SUFFIX = { br: '+br', gzip: '+gz' } as const;
const CODED = /\+(?:br|gz)"$/;

/**
 * The validator of a representation sent in `coding`: a strong ETag must differ between content codings (RFC 9110
 * §8.8.3; a cache must not answer a gzip request with Brotli bytes), so `"7-v2ud"` is `"7-v2ud+br"` in Brotli and
 * `"7-v2ud+gz"` in gzip; a weak one keeps its `W/`.
 */
export function codedEtag(etag: string, coding: Coding): string {
  return coding === 'identity' ? etag : `${etag.slice(0, -1)}${CODING_SUFFIX[coding]}"`;
}

/**
 * RFC 9110 §13.1.1: strong comparison, `*` matches any current representation. The codings of the current
 * representation are all current: a client that got `"7-v2ud+gz"` with a compressed GET writes with that tag
 * as well as with `"7-v2ud"` (the bytes differ, the representation data is the same). A weak tag never matches.
 */
export function ifMatchHolds(header: string | undefined, etag: string): boolean {
  if (header === undefined) return true;
  const list = tags(header);
  return list.includes('*') || list.some((t) => t === etag || (CODED.test(t) && t.replace(CODED, '"') === etag));
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
