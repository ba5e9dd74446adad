// Content negotiation on Accept (RFC 9110 §12.5.1) with the `negotiator` package; no Accept means anything goes.
import Negotiator from 'negotiator';
import { recentMemo } from '../../lib/recent-memo.js';

const JSON_TYPES = ['application/json'];

/** What every JSON response declares. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept === '' || accept === '*/*' || accept === 'application/json') return true;
  return allowsJson(accept);
}

const allowsJson = recentMemo((accept: string) => new Negotiator({ headers: { accept } }).mediaType(JSON_TYPES) !== undefined);
