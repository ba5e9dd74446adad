// The five pagination styles of DESIGN §6, chosen by the parameters present; mixing styles is a 400.
import type { ErrorDetail } from '../errors/app-error.js';
import { signToken, verifyToken } from './tokens.js';

import { DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, PAGINATION_STYLES, type PageStyle } from './list-parameters.js';

export { DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, type PageStyle };

export type PageRequest =
  | { style: 'cursor' | 'token'; limit: number; after?: unknown[] }
  | { style: 'keyset'; limit: number; afterId?: string }
  | { style: 'offset'; limit: number; offset: number }
  | { style: 'page'; limit: number; offset: number; page: number };

/** The parameters each style reads; `limit` is shared by cursor, offset and keyset. */
const STYLE_PARAMS = Object.fromEntries(Object.entries(PAGINATION_STYLES).map(([style, s]) => [style, s.params.map((p) => p.name)])) as Record<PageStyle, string[]>;
export const PAGINATION_PARAMS: ReadonlySet<string> = new Set(Object.values(STYLE_PARAMS).flat());

/** Parameters that decide the style on their own (limit alone means the default, cursor). */
const MARKERS: Array<[PageStyle, string[]]> = [
  ['token', ['page_size', 'page_token']],
  ['page', ['page', 'per_page']],
  ['offset', ['offset']],
  ['keyset', ['after_id']],
  ['cursor', ['cursor']],
];

export function detectStyle(present: Set<string>, details: ErrorDetail[]): PageStyle {
  const styles = MARKERS.filter(([, params]) => params.some((p) => present.has(p))).map(([s]) => s);
  const style = styles[0] ?? 'cursor';
  const foreign = [...present].filter((p) => PAGINATION_PARAMS.has(p) && !STYLE_PARAMS[style].includes(p));
  if (styles.length > 1 || foreign.length > 0) {
    const field = [...present]
      .filter((p) => PAGINATION_PARAMS.has(p))
      .sort()
      .join(',');
    details.push({ field, message: 'mixes pagination styles; use one of limit+cursor, offset+limit, page+per_page, page_size+page_token or after_id+limit' });
  }
  return style;
}

export function parseCount(details: ErrorDetail[], name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (Number.isNaN(n) || n < min || n > max) {
    details.push({ field: name, message: `must be an integer from ${min} to ${max}`, value: raw });
    return fallback;
  }
  return n;
}

interface TokenPayload {
  v: 1;
  k: 'c' | 't';
  s: string;
  a: unknown[];
}

/** Cursors (`c`) and page tokens (`t`) are signed, carry the list's shape, and are not interchangeable. */
export function encodePosition(kind: 'cursor' | 'token', shape: string, after: unknown[], secret: string): string {
  return signToken({ v: 1, k: kind === 'cursor' ? 'c' : 't', s: shape, a: after } satisfies TokenPayload, secret);
}

export function decodePosition(details: ErrorDetail[], name: string, kind: 'cursor' | 'token', raw: string, shape: string, keys: number, secret: string): unknown[] | undefined {
  const payload = verifyToken(raw, secret) as TokenPayload | undefined;
  const valid = payload && payload.v === 1 && payload.k === (kind === 'cursor' ? 'c' : 't') && Array.isArray(payload.a) && typeof payload.s === 'string';
  if (!valid) {
    details.push({ field: name, message: `is not a valid ${kind === 'cursor' ? 'cursor' : 'page token'}`, value: raw });
    return undefined;
  }
  if (payload.s !== shape || payload.a.length !== keys) {
    details.push({ field: name, message: 'was made for another collection, other filters, another sort or another search', value: raw });
    return undefined;
  }
  return payload.a;
}
