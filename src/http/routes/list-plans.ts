// A list request's plan, parsed once per distinct query string: polling clients send the same URL again and again.
import type { CompiledResource } from '../../model/compile.js';
import type { ApiVersion } from '../../model/versions.js';
import { parseListParams, withCursor, type ListPlan, type QueryInput } from '../../query/list-params.js';
import { PlanMemo } from '../../query/plan-memo.js';
import { queryInVersion } from '../../query/versioned-query.js';
import { MAX_OFFSET } from '../../query/list-parameters.js';

/** Plans by scope and query string (src/query/plan-memo.ts): polling clients send the same URL again and again. */
const memo = new PlanMemo();

export function planFor(version: ApiVersion, r: CompiledResource, scope: string, rawQuery: string, query: QueryInput, secret: string): ListPlan {
  const cursor = version.newer ? undefined : oneParam(rawQuery, query, 'cursor');
  if (cursor !== undefined) {
    // The query without its cursor, kept as any plan is; the cursor checked against it. A refusal of the rest takes
    // the whole parse below, which reports every detail at once (the cursor's too) as it always has.
    let base: ListPlan | undefined;
    try {
      base = memo.plan(r, `${scope}\n${cursor.rest}\ncursor`, secret, () => parseListParams(r, { ...query, cursor: undefined }, secret, scope));
    } catch {
      base = undefined;
    }
    if (base !== undefined && base.page.style === 'cursor') return withCursor(base, cursor.value, secret);
  }
  const offset = oneParam(rawQuery, query, 'offset');
  if (offset !== undefined && OFFSET.test(offset.value) && Number(offset.value) <= MAX_OFFSET) {
    // Offset pages: the plan of the query at offset 0, kept, with this offset put in. Random offsets are as many URLs
    // (a client jumping through a collection, bench/uncached.mjs), which parsed whole each time and pushed every
    // other plan out of the memo. An offset the whole parse would refuse, or a refused rest, parses whole below.
    let base: ListPlan | undefined;
    try {
      base = memo.plan(r, `${scope}\n${offset.rest}\noffset`, secret, () => parseWhole(version, r, { ...query, offset: '0' }, secret, scope));
    } catch {
      base = undefined;
    }
    if (base !== undefined && base.page.style === 'offset') return Object.freeze({ ...base, page: Object.freeze({ ...base.page, offset: Number(offset.value) }) });
  }
  return memo.plan(r, `${scope}\n${rawQuery}`, secret, () => parseWhole(version, r, query, secret, scope));
}

/** What parseListParams accepts as an offset (src/query/pagination.ts parseCount): up to nine digits, at most MAX_OFFSET. */
const OFFSET = /^\d{1,9}$/;

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
