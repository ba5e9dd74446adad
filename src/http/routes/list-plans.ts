// A list request's plan, parsed once per distinct query string: polling clients send the same URL again and again.
import { deepFreeze } from '../../lib/deep-freeze.js';
import type { CompiledResource } from '../../model/compile.js';
import type { ApiVersion } from '../../model/versions.js';
import { parseListParams, type ListPlan, type QueryInput } from '../../query/list-params.js';
import { queryInVersion } from '../../query/versioned-query.js';

/**
 * Parsing is pure: the same version, collection and query string give the same plan (a cursor's signature
 * check included: cursors do not expire), so a plan is kept, frozen, by those. Only plans are kept, never
 * refusals (a refusal is cheap to make again and would let bad queries fill the memo). Bounded: when full,
 * it starts over.
 */
const MAX_PLANS = 1_000;
/** By compiled resource (each app compiles its own), then by scope and query string; a plan holds its secret. */
const byResource = new WeakMap<CompiledResource, Map<string, { secret: string; plan: ListPlan }>>();

export function planFor(version: ApiVersion, r: CompiledResource, scope: string, rawQuery: string, query: QueryInput, secret: string): ListPlan {
  let plans = byResource.get(r);
  if (plans === undefined) byResource.set(r, (plans = new Map()));
  const key = `${scope}\n${rawQuery}`;
  const kept = plans.get(key);
  let plan = kept !== undefined && kept.secret === secret ? kept.plan : undefined;
  if (plan === undefined) {
    // An older version's field names become the newest's first (src/query/versioned-query.ts).
    const versioned = queryInVersion(version, r, query);
    try {
      plan = deepFreeze(parseListParams(r, versioned.query, secret, scope, versioned.rendered));
    } catch (err) {
      throw versioned.restore(err);
    }
    if (plans.size >= MAX_PLANS) plans.clear();
    plans.set(key, { secret, plan });
  }
  return plan;
}
