// A list request's plan, parsed once per distinct query string: polling clients send the same URL again and again.
import type { CompiledResource } from '../../model/compile.js';
import type { ApiVersion } from '../../model/versions.js';
import { parseListParams, withCursor, type ListPlan, type QueryInput } from '../../query/list-params.js';
import { PlanMemo } from '../../query/plan-memo.js';
import { queryInVersion } from '../../query/versioned-query.js';

/** Plans by scope and query string (src/query/plan-memo.ts): polling clients send the same URL again and again. */
const memo = new PlanMemo();

export function planFor(version: ApiVersion, r: CompiledResource, scope: string, rawQuery: string, query: QueryInput, secret: string): ListPlan {
  const cursor = version.newer ? undefined : withoutCursor(rawQuery, query);
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
  return memo.plan(r, `${scope}\n${rawQuery}`, secret, () => {
    // An older version's field names become the newest's first (src/query/versioned-query.ts).
    const versioned = queryInVersion(version, r, query);
    try {
      return parseListParams(r, versioned.query, secret, scope, versioned.rendered);
    } catch (err) {
      throw versioned.restore(err);
    }
  });
}

/**
 * A newest-version query's one `cursor` and the raw query string without it (the key of the rest's plan), or undefined
 * when the query has none or anything else than one plain `cursor=` (an encoded name, twice): those parse whole.
 */
function withoutCursor(rawQuery: string, query: QueryInput): { value: string; rest: string } | undefined {
  const value = query.cursor;
  if (typeof value !== 'string') return undefined;
  const start = rawQuery.startsWith('?cursor=') ? 1 : rawQuery.indexOf('&cursor=') + 1;
  if (start <= 0 || rawQuery.includes('&cursor=', start)) return undefined;
  const end = rawQuery.indexOf('&', start);
  return { value, rest: rawQuery.slice(0, start) + (end < 0 ? '' : rawQuery.slice(end + 1)) };
}
