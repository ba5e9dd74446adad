// Error-body rules (spec §7 Error body): every error is the same JSON object, and its request id matches X-Request-Id.
import type { Collection, Context } from '../context.js';
import { samples } from '../samples.js';
import type { Evidence, Exchange } from '../types.js';
import { fail, isObject, notApplicable, pass, seen } from '../verdict.js';
import { perCollection, type Rule } from './rule.js';

/** The error answers the status probes provoke for a collection (those that did answer with an error status). */
async function errorSamples(ctx: Context, c: Collection): Promise<Exchange[]> {
  const all = [await samples.missingItem(ctx, c), await samples.missingRoute(ctx, c), await samples.badQuery(ctx, c), await samples.notAcceptable(ctx, c)];
  if (ctx.options.headers.length > 0) all.push(await samples.anonymous(ctx, c));
  all.push(await samples.notAllowed(ctx, c));
  return all.filter((x) => x.status >= 400);
}

/** What is wrong with an error body, or undefined when it has the spec §7 shape. */
function shapeProblem(x: Exchange): string | undefined {
  if (!/json/i.test(x.headers['content-type'] ?? '')) return `Content-Type ${x.headers['content-type'] ?? 'absent'}, body ${JSON.stringify(x.text.slice(0, 60))}`;
  const error = isObject(x.json) ? x.json.error : undefined;
  if (!isObject(error)) return `no "error" object in ${JSON.stringify(x.text.slice(0, 80))}`;
  if (typeof error.code !== 'string' || typeof error.message !== 'string') return 'error.code and error.message must be strings';
  if (error.details !== undefined) {
    if (!Array.isArray(error.details)) return 'error.details is not an array';
    if (!error.details.every((d) => isObject(d) && typeof d.field === 'string' && typeof d.message === 'string')) return 'an error.details entry lacks field or message';
  }
  return undefined;
}

export const errorBody: Rule = {
  id: 'errors.body',
  title: 'Every error answer is JSON {"error": {"code", "message", "details"?}}, the same structure everywhere',
  section: 'spec §7 Error body',
  run: perCollection(async (ctx, c) => {
    const errors = await errorSamples(ctx, c);
    if (errors.length === 0) return notApplicable('none of the error probes got an error status');
    const evidence: Evidence[] = [];
    let bad = 0;
    for (const x of errors) {
      const problem = shapeProblem(x);
      if (problem) bad++;
      evidence.push(seen(x, problem ?? `error.code ${String((x.json as { error: { code: string } }).error.code)}`));
    }
    return bad ? fail(`${bad} of ${errors.length} error answers lack the error object`, evidence) : pass(`${errors.length} error answers, one structure`, evidence);
  }),
};

export const requestId: Rule = {
  id: 'errors.request-id',
  title: 'Error bodies carry one request-id spelling (request_id or requestId), equal to the X-Request-Id header',
  section: 'spec §7 Error body (error.requestId / error.request_id: one is chosen and used consistently); DESIGN §5',
  run: perCollection(async (ctx, c) => {
    const errors = await errorSamples(ctx, c);
    const evidence: Evidence[] = [];
    const spellings = new Set<string>();
    const problems: string[] = [];
    let carried = 0;
    for (const x of errors) {
      const error = isObject(x.json) && isObject(x.json.error) ? x.json.error : {};
      const key = 'request_id' in error ? 'request_id' : 'requestId' in error ? 'requestId' : undefined;
      const header = x.headers['x-request-id'];
      if (key) {
        carried++;
        spellings.add(key);
        if (header !== undefined && error[key] !== header) problems.push(`${x.url.pathname}: ${key} ${String(error[key])} ≠ X-Request-Id ${header}`);
      }
      evidence.push(seen(x, `X-Request-Id ${header ?? 'absent'}, body ${key ? `${key} ${String(error[key])}` : 'without a request id'}`));
    }
    if (carried === 0) return notApplicable('no error body carries a request id (the spec makes it optional)', evidence);
    if (carried < errors.length) problems.push(`${errors.length - carried} of ${errors.length} error bodies lack the request id the others carry`);
    if (spellings.size > 1) problems.push('both spellings, request_id and requestId, appear');
    return problems.length ? fail(problems.join('; '), evidence) : pass(`${carried} error bodies, ${[...spellings][0]} equal to X-Request-Id`, evidence);
  }),
};
