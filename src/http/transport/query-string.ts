// The query-string parser: fast-querystring's, plus a record of parameters that are not text (bad percent-encoding, U+0000).
import { parse } from 'fast-querystring';
import { decodeFormComponent } from '../../lib/form-encoding.js';
import { isWellFormedText } from '../../model/well-formed-text.js';

/** Names of the parameters of a query that are not well-formed text; absent on a clean query. */
export const MALFORMED = Symbol('malformed query parameters');

export type ParsedQuery = Record<string, string | string[]> & { [MALFORMED]?: string[] };

/**
 * fast-querystring keeps a parameter whose percent-encoding does not decode to UTF-8 as its raw text,
 * and decodes `%00` to U+0000; either would reach the stores as something the client did not mean
 * (PostgreSQL refuses U+0000 outright). Such parameters are noted, and the request is refused with 400
 * INVALID_QUERY naming them before any handler runs. A query without `%` cannot hold either, and pays nothing.
 */
export function parseQuery(query: string): ParsedQuery {
  const parsed = parse(query) as ParsedQuery;
  if (!query.includes('%')) return parsed;
  const bad = new Set<string>();
  for (const pair of query.split('&')) {
    if (!pair.includes('%')) continue;
    const eq = pair.indexOf('=');
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    const key = decodeFormComponent(rawKey);
    const value = eq < 0 ? '' : decodeFormComponent(pair.slice(eq + 1));
    if (key === undefined || value === undefined || !isWellFormedText(key) || !isWellFormedText(value)) bad.add(key !== undefined && isWellFormedText(key) ? key : rawKey);
  }
  if (bad.size > 0) Object.defineProperty(parsed, MALFORMED, { value: [...bad].sort(), enumerable: false });
  return parsed;
}
