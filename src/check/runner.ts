// Runs a check: discovery, the selected rules in order, the cleanup of what --write created, then the burst; the report.
import { createContext, type Context } from './context.js';
import { discover } from './discovery.js';
import { Probe } from './probe.js';
import { matches, RULES } from './rules/index.js';
import type { Rule } from './rules/rule.js';
import type { CheckOptions, Report, RuleResult, Status, Verdict } from './types.js';
import { guarded, notApplicable } from './verdict.js';
import { remove } from './writes.js';

export interface Progress {
  /** Called before each rule runs (index from 1). */
  rule(index: number, total: number, id: string): void;
}

function selected(options: CheckOptions): Rule[] {
  return RULES.filter((r) => (options.only.length === 0 || options.only.some((p) => matches(r, p))) && !options.skip.some((p) => matches(r, p)));
}

async function verdictOf(ctx: Context, rule: Rule): Promise<Verdict> {
  if (rule.needs === 'write' && !ctx.options.write) return notApplicable('runs only with --write (it creates objects and deletes them again)');
  if (rule.needs === 'burst' && ctx.options.burst === undefined) return notApplicable('runs only with --burst N (it sends N requests to provoke a 429)');
  return guarded(() => rule.run(ctx));
}

/** Deletes whatever a rule created and did not delete itself (a rule that stopped on an error). */
async function cleanup(ctx: Context): Promise<void> {
  for (const entry of [...ctx.created]) await remove(ctx, entry.url);
}

export async function runCheck(options: CheckOptions, progress?: Progress): Promise<Report> {
  const started = Date.now();
  const probe = new Probe(options);
  try {
    const found = await discover(options, probe);
    const ctx = createContext(options, probe, found.collections, found.trouble);
    const rules = selected(options);
    const results = new Map<string, Verdict>();
    // The burst runs after everything else and after the cleanup: once limited, the API would refuse the rest.
    const order = [...rules.filter((r) => r.needs !== 'burst'), ...rules.filter((r) => r.needs === 'burst')];
    let cleaned = false;
    for (const [i, rule] of order.entries()) {
      if (rule.needs === 'burst' && !cleaned) {
        await cleanup(ctx);
        cleaned = true;
      }
      progress?.rule(i + 1, order.length, rule.id);
      results.set(rule.id, await verdictOf(ctx, rule));
    }
    if (!cleaned) await cleanup(ctx);
    const ruleResults: RuleResult[] = rules.map((r) => ({ id: r.id, title: r.title, section: r.section, ...results.get(r.id)! }));
    const summary: Record<Status, number> = { pass: 0, fail: 0, 'not-applicable': 0, error: 0 };
    for (const r of ruleResults) summary[r.status]++;
    return {
      baseUrl: options.baseUrl.href,
      startedAt: new Date(started).toISOString(),
      durationMs: Date.now() - started,
      requests: probe.count,
      write: options.write,
      discovery: {
        openapi: found.openapi,
        collections: found.collections.map((c) => c.url.pathname),
        items: found.collections.flatMap((c) => (c.item ? [c.item.pathname] : [])),
        notes: found.notes,
      },
      rules: ruleResults,
      cleanup: ctx.cleanup,
      summary,
    };
  } finally {
    await probe.close();
  }
}
