// Rate-limit rules (spec §8 Limits): X-RateLimit-* on limited paths; with --burst N, a 429 with Retry-After.
import { samples } from '../samples.js';
import type { Evidence, Exchange } from '../types.js';
import { fail, intHeader, notApplicable, pass, seen } from '../verdict.js';
import { perCollection, type Rule } from './rule.js';

const HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
/** A Unix timestamp (spec §8: X-RateLimit-Reset is one) is past 2001; a count of seconds is far below. */
const UNIX_2001 = 1_000_000_000;

function headerProblems(x: Exchange): string[] {
  const missing = HEADERS.filter((h) => intHeader(x, h) === undefined);
  if (missing.length) return [`${x.url.pathname}: ${missing.map((h) => (x.headers[h] === undefined ? `no ${h}` : `${h} ${x.headers[h]} is not an integer`)).join(', ')}`];
  const problems: string[] = [];
  if (intHeader(x, 'x-ratelimit-remaining')! > intHeader(x, 'x-ratelimit-limit')!) problems.push('X-RateLimit-Remaining exceeds X-RateLimit-Limit');
  if (intHeader(x, 'x-ratelimit-reset')! < UNIX_2001) problems.push(`X-RateLimit-Reset ${x.headers['x-ratelimit-reset']} is not a Unix timestamp`);
  return problems;
}

const NAMES = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
const note = (x: Exchange): string => HEADERS.map((h, i) => `${NAMES[i]}: ${x.headers[h] ?? 'absent'}`).join(', ');

export const rateLimitHeaders: Rule = {
  id: 'ratelimit.headers',
  title: 'Reads carry X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (a Unix timestamp)',
  section: 'spec §8 Limits (rate limiting per user, per IP and globally; headers)',
  run: perCollection(async (ctx, c) => {
    const reads = [c.list];
    const item = await samples.item(ctx, c);
    if (item?.status === 200) reads.push(item);
    const evidence = reads.map((x) => seen(x, note(x)));
    const problems = reads.flatMap(headerProblems);
    return problems.length ? fail(problems.join('; '), evidence) : pass('the three headers on every read', evidence);
  }),
};

export const tooManyRequests: Rule = {
  id: 'ratelimit.429',
  title: 'A burst past the limit answers 429 with Retry-After (seconds)',
  section: 'spec §8 Limits (Retry-After on 429); §7 Status codes (429)',
  needs: 'burst',
  run: async (ctx) => {
    const c = ctx.collections[0];
    if (!c) return notApplicable('no collection found');
    const burst = ctx.options.burst ?? 0;
    const remaining = intHeader(c.list, 'x-ratelimit-remaining');
    const evidence: Evidence[] = [];
    let sent = 0;
    for (; sent < burst; sent++) {
      const x = await ctx.probe.send('GET', c.url, { expect429: true });
      if (x.status !== 429) continue;
      const retryAfter = intHeader(x, 'retry-after');
      evidence.push(seen(x, `after ${sent + 1} requests; Retry-After: ${x.headers['retry-after'] ?? 'absent'}`));
      return retryAfter !== undefined ? pass(`429 after ${sent + 1} requests, Retry-After ${retryAfter}`, evidence) : fail('429 without a Retry-After in seconds', evidence);
    }
    evidence.push({ request: `GET ${c.url.pathname} × ${sent}`, note: `no 429; X-RateLimit-Remaining was ${remaining ?? 'not sent'} before` });
    if (remaining !== undefined && remaining < sent) return fail(`${sent} requests, more than the ${remaining} remaining, and no 429`, evidence);
    return notApplicable(`${sent} requests did not reach the limit${remaining !== undefined ? ` (${remaining} remaining)` : ''}: give a larger --burst`, evidence);
  },
};
