// Content negotiation on Accept (RFC 9110 §12.5.1) with the `negotiator` package; no Accept means anything goes.
import Negotiator from 'negotiator';
import { recentMemo } from '../../lib/recent-memo.js';

const JSON_TYPES = ['application/json'];

/** What every JSON response declares. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The media type of `offered` an Accept header prefers (undefined when it allows none), remembered for recent header
 * values: a Negotiator parses and sorts the header on every call, and the answer depends on its text alone.
 */
export function preferredMediaType<T extends string>(offered: readonly T[]): (accept: string) => T | undefined {
  return recentMemo((accept) => new Negotiator({ headers: { accept } }).mediaType(offered as T[]) as T | undefined);
}

const preferredJson = preferredMediaType(JSON_TYPES);

export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept === '' || accept === '*/*' || accept === 'application/json') return true;
  return preferredJson(accept) !== undefined;
}
