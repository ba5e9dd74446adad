// A list request's plan, parsed once per distinct query string: polling clients send the same URL again and again.
import type { CompiledResource } from '../../model/compile.js';
import type { ApiVersion } from '../../model/versions.js';
import { parseListParams, type ListPlan, type QueryInput } from '../../query/list-params.js';
import { PlanMemo } from '../../query/plan-memo.js';
import { queryInVersion } from '../../query/versioned-query.js';

/** Plans by scope and query string (src/query/plan-memo.ts): polling clients send the same URL again and again. */
const memo = new PlanMemo();

export function planFor(version: ApiVersion, r: CompiledResource, scope: string, rawQuery: string, query: QueryInput, secret: string): ListPlan {
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
