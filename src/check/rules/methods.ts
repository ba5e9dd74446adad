// Method rules (spec §4 Method semantics, §7 status codes): OPTIONS answers with Allow; a method not allowed is 405 with Allow.
import { allowOf, samples } from '../samples.js';
import { fail, notApplicable, pass, seen } from '../verdict.js';
import type { Evidence } from '../types.js';
import { perCollection, type Rule } from './rule.js';

export const optionsAllow: Rule = {
  id: 'methods.options',
  title: 'OPTIONS on a collection and on an item answers 200 (or 204) with an Allow header listing GET',
  section: 'spec §4 Method semantics (OPTIONS: allowed methods, 200)',
  run: perCollection(async (ctx, c) => {
    const evidence: Evidence[] = [];
    const problems: string[] = [];
    for (const url of [c.url, ...(c.item ? [c.item] : [])]) {
      const x = await samples.options(ctx, url);
      const allow = allowOf(x);
      evidence.push(seen(x, allow ? `Allow: ${x.headers.allow}` : 'no Allow header'));
      if (x.status !== 200 && x.status !== 204) problems.push(`OPTIONS ${url.pathname} answered ${x.status}`);
      else if (!allow?.includes('GET')) problems.push(`OPTIONS ${url.pathname} ${allow ? 'has an Allow without GET' : 'has no Allow header'}`);
    }
    return problems.length ? fail(problems.join('; '), evidence) : pass('OPTIONS lists the allowed methods', evidence);
  }),
};

export const methodNotAllowed: Rule = {
  id: 'methods.not-allowed',
  title: 'A method the path does not support answers 405 with an Allow header (501 for a method not implemented at all)',
  section: 'spec §7 Status codes (405 Method Not Allowed: method unsupported for the path); RFC 9110 §15.5.6',
  run: perCollection(async (ctx, c) => {
    const x = await samples.notAllowed(ctx, c);
    const why = x.method === 'TRACE' ? 'TRACE, as OPTIONS named no unsupported method' : `${x.method}, not in Allow`;
    const evidence = [seen(x, `${why}; ${x.headers.allow ? `Allow: ${x.headers.allow}` : 'no Allow header'}`)];
    if (x.status === 501 && x.method === 'TRACE') return pass('TRACE answered 501 Not Implemented', evidence);
    if (x.status === 200 && x.method === 'TRACE') return notApplicable('the server implements TRACE here', evidence);
    if (x.status !== 405) return fail(`${x.method} answered ${x.status}, not 405`, evidence);
    if (!x.headers.allow) return fail('405 without an Allow header (RFC 9110 §15.5.6 requires it)', evidence);
    return pass(`${x.method} answered 405 with Allow`, evidence);
  }),
};
