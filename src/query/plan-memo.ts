// List plans kept by what they were parsed from: REST's query strings (src/http/routes/list-plans.ts) and GraphQL's connection arguments (src/graphql/list-args.ts).
import { deepFreeze } from '../lib/deep-freeze.js';
import type { CompiledResource } from '../model/compile.js';
import type { ListPlan } from './list-params.js';

/** Plans kept per memo, in all; when full, it starts over. */
const MAX_PLANS = 1_000;

/** Every plan a memo made and kept: what is made from a plan once (its store query) is kept only for these. */
const keptPlans = new WeakSet<ListPlan>();

/**
 * Whether `plan` is one a memo keeps. A plan made per request from a kept one (a cursor's or an offset's put into it:
 * src/http/routes/list-plans.ts) is frozen too, but is never seen again: keeping anything by it would only fill a
 * WeakMap for the collector.
 */
export function isKeptPlan(plan: ListPlan): boolean {
  return keptPlans.has(plan);
}

/**
 * Parsing is pure: the same collection, scope and parameters give the same plan (a cursor's signature check
 * included: cursors do not expire), so a plan is kept, frozen, by those. Only plans are kept, never refusals (a
 * refusal is cheap to make again and would let bad queries fill the memo). Kept by compiled resource (each app
 * compiles its own); a plan holds the secret it was parsed with, and another secret parses anew.
 */
export class PlanMemo {
  private readonly byResource = new WeakMap<CompiledResource, Map<string, { secret: string; plan: ListPlan }>>();

  /** The plan kept for `key` on `r` under `secret`, else the one `parse` makes (thrown refusals pass through). */
  plan(r: CompiledResource, key: string, secret: string, parse: () => ListPlan): ListPlan {
    let plans = this.byResource.get(r);
    if (plans === undefined) this.byResource.set(r, (plans = new Map()));
    const kept = plans.get(key);
    if (kept !== undefined && kept.secret === secret) return kept.plan;
    const plan = deepFreeze(parse());
    keptPlans.add(plan);
    if (plans.size >= MAX_PLANS) plans.clear();
    plans.set(key, { secret, plan });
    return plan;
  }
}
