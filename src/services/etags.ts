// An object's strong ETag and If-Match (RFC 9110 §8.8.3, §13.1.1), transport-neutral: REST's header and GraphQL's `etag` field and `ifMatch` argument are one value.
import type { Access, Loaded } from './access.js';
import type { StoredRecord } from '../store/types.js';

/**
 * A strong ETag: it changes with every write (the version counter) and with every change of
 * representation (the API version and the links this caller sees), so equal tags mean identical
 * bodies. ETags compare per URL, so the id need not be part of it; nothing is hashed per request.
 */
export function etagOf(record: StoredRecord, access: Access, apiVersion: string): string {
  return `"${record.version}-${apiVersion}${access.update ? 'u' : ''}${access.delete ? 'd' : ''}${access.actions.length ? `-${access.actions.join('.')}` : ''}"`;
}

/** Splits an If-Match / If-None-Match list; `*` is returned as the only element. */
export function entityTags(header: string): string[] {
  return header
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
}

/**
 * What the tag of a content-coded representation appends to the identity tag (src/http/rendering/conditional.ts,
 * codedEtag; RFC 9110 §8.8.3): `"7-v2ud+br"`, `"7-v2ud+gz"`. `+` is in no tag Canon makes otherwise (counters,
 * `v2`, action names, base64url digests).
 */
export const CODING_SUFFIXES = { br: '+br', gzip: '+gz' } as const;
const CODED = /\+(?:br|gz)"$/;

/**
 * RFC 9110 §13.1.1: strong comparison, `*` matches any current representation. The codings of the current
 * representation are all current: a client that got `"7-v2ud+gz"` with a compressed GET writes with that tag
 * as well as with `"7-v2ud"` (the bytes differ, the representation data is the same). A weak tag never matches.
 */
export function ifMatchHolds(header: string | undefined, etag: string): boolean {
  if (header === undefined) return true;
  const list = entityTags(header);
  return list.includes('*') || list.some((t) => t === etag || (CODED.test(t) && t.replace(CODED, '"') === etag));
}

/** The If-Match precondition a write checks inside its transaction, against the object as the caller sees it now. */
export function ifMatchPrecondition(ifMatch: string, apiVersion: string): (loaded: Loaded) => boolean {
  return (l) => ifMatchHolds(ifMatch, etagOf(l.record, l.access, apiVersion));
}
