// A rule: its id, statement and spec section, what it needs (--write, --burst), and how it reaches a verdict.
import type { Collection, Context } from '../context.js';
import type { Verdict } from '../types.js';
import { combine, guarded } from '../verdict.js';

export interface Rule {
  /** Stable: `--only`/`--skip` and CI pipelines name rules by it. */
  id: string;
  /** One line: what a conforming API does. */
  title: string;
  /** Where the rule comes from: `spec §7 Error body`, and the DESIGN or RFC text when the spec leaves it open. */
  section: string;
  /** Runs only with --write (it creates objects, deleted again) or --burst N (it provokes a 429, so it runs last). */
  needs?: 'write' | 'burst';
  run(ctx: Context): Promise<Verdict>;
}

/** A rule judged on each collection apart, the verdicts combined (rule.ts combine); network trouble on one is its `error`. */
export function perCollection(fn: (ctx: Context, c: Collection) => Promise<Verdict>): (ctx: Context) => Promise<Verdict> {
  return async (ctx) => {
    if (ctx.collections.length === 0 && ctx.trouble) return { status: 'error', summary: `discovery failed: ${ctx.trouble}`, evidence: [] };
    const parts = [];
    for (const c of ctx.collections) parts.push({ label: c.url.pathname, verdict: await guarded(() => fn(ctx, c)) });
    return combine(parts);
  };
}
