// A list request's plan, parsed once per distinct query string: polling clients send the same URL again and again.
import type { CompiledResource } from '../../model/compile.js';
import type { ApiVersion } from '../../model/versions.js';
import { parseListParams, withCursor, withOffset, type ListPlan, type QueryInput } from '../../query/list-params.js';
import { PlanMemo } from '../../query/plan-memo.js';
import { queryInVersion } from '../../query/versioned-query.js';

/** Plans by scope and query string (src/query/plan-memo.ts): polling clients send the same URL again and again. */
const memo = new PlanMemo();

export function planFor(version: ApiVersion, r: CompiledResource, scope: string, rawQuery: string, query: QueryInput, secret: string): ListPlan {
  // A cursor page: the query without its cursor, kept as any plan is; the cursor checked against it.
  const cursor = version.newer ? undefined : oneParam(rawQuery, query, 'cursor');
  const walk = cursor && restPlan(r, `${scope}\n${cursor.rest}\ncursor`, secret, () => parseListParams(r, { ...query, cursor: undefined }, secret, scope));
  if (cursor && walk?.page.style === 'cursor') return withCursor(walk, cursor.value, secret);
  // An offset page: the query at offset 0, kept, with this offset put in. Random offsets are as many URLs (a client
  // jumping through a collection, bench/uncached.mjs), which parsed whole each time and pushed every other plan out
  // of the memo.
  const offset = oneParam(rawQuery, query, 'offset');
  const jump = offset && restPlan(r, `${scope}\n${offset.rest}\noffset`, secret, () => parseWhole(version, r, { ...query, offset: '0' }, secret, scope));
  if (offset && jump?.page.style === 'offset') return withOffset(jump, offset.value);
  return memo.plan(r, `${scope}\n${rawQuery}`, secret, () => parseWhole(version, r, query, secret, scope));
}

/**
 * The kept plan of a query without one parameter, or undefined when that rest is refused: the whole parse then
 * reports every detail at once (the parameter's too), as it always has.
 */
function restPlan(r: CompiledResource, key: string, secret: string, parse: () => ListPlan): ListPlan | undefined {
  try {
    return memo.plan(r, key, secret, parse);
  } catch {
    return undefined;
  }
}

/** The whole query's plan; an older version's field names become the newest's first (src/query/versioned-query.ts). */
function parseWhole(version: ApiVersion, r: CompiledResource, query: QueryInput, secret: string, scope: string): ListPlan {
  const versioned = queryInVersion(version, r, query);
  try {
    return parseListParams(r, versioned.query, secret, scope, versioned.rendered);
  } catch (err) {
    throw versioned.restore(err);
  }
}

/**
 * The query's one `name` parameter and the raw query string without it (the key of the rest's plan), or undefined
 * when the query has none or anything else than one plain `name=` (an encoded name, twice): those parse whole.
 */
function oneParam(rawQuery: string, query: QueryInput, name: string): { value: string; rest: string } | undefined {
  const value = query[name];
  if (typeof value !== 'string') return undefined;
  const start = rawQuery.startsWith(`?${name}=`) ? 1 : rawQuery.indexOf(`&${name}=`) + 1;
  if (start <= 0 || rawQuery.includes(`&${name}=`, start)) return undefined;
  const end = rawQuery.indexOf('&', start);
  // The raw value must be the parsed one: an encoded value (`offset=%31`) is the whole parse's to read.
  if (rawQuery.slice(start + name.length + 1, end < 0 ? undefined : end) !== value) return undefined;
  return { value, rest: rawQuery.slice(0, start) + (end < 0 ? '' : rawQuery.slice(end + 1)) };
}
