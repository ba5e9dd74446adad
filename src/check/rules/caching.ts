// Caching rules (spec §1: responses declare whether they may be cached with Cache-Control, ETag, Last-Modified; §7 304).
import { samples } from '../samples.js';
import type { Evidence } from '../types.js';
import { fail, notApplicable, pass, seen } from '../verdict.js';
import { perCollection, type Rule } from './rule.js';

/** RFC 9110 §8.8.3 entity-tag: optional W/, then a quoted opaque string. */
const ETAG = /^(W\/)?"[^"]*"$/;

export const etag: Rule = {
  id: 'caching.etag',
  title: 'A single resource read carries a well-formed ETag',
  section: 'spec §1 (responses declare cacheability with Cache-Control, ETag, Last-Modified); §7 304 Not Modified',
  run: perCollection(async (ctx, c) => {
    const x = await samples.item(ctx, c);
    if (!x) return notApplicable('the collection is empty: no item to read');
    const tag = x.headers.etag;
    const evidence = [seen(x, tag ? `ETag: ${tag}` : 'no ETag')];
    if (x.status !== 200) return fail(`reading the item answered ${x.status}`, evidence);
    if (!tag) return fail('no ETag on a single resource', evidence);
    return ETAG.test(tag) ? pass('ETag present', evidence) : fail(`ETag ${tag} is not a quoted entity-tag`, evidence);
  }),
};

export const notModified: Rule = {
  id: 'caching.not-modified',
  title: 'If-None-Match with the current ETag answers 304 without a body',
  section: 'spec §7 Status codes (304 Not Modified: cache still valid); RFC 9110 §13.1.2',
  run: perCollection(async (ctx, c) => {
    const x = await samples.item(ctx, c);
    const tag = x?.headers.etag;
    if (!x || !tag) return notApplicable(x ? 'the item has no ETag (see caching.etag)' : 'the collection is empty');
    const again = await ctx.probe.send('GET', x.url, { headers: { 'if-none-match': tag } });
    const evidence = [seen(again, `If-None-Match: ${tag}${again.text.length ? `, a body of ${again.text.length} bytes` : ''}`)];
    if (again.status !== 304) return fail(`answered ${again.status}, not 304`, evidence);
    return again.text.length ? fail('304 with a body', evidence) : pass('304 without a body', evidence);
  }),
};

export const cacheControl: Rule = {
  id: 'caching.cache-control',
  title: 'Reads carry Cache-Control; authenticated reads keep shared caches out (private or no-store)',
  section: 'spec §1 (responses declare whether they may be cached); RFC 9111 §5.2.2; DESIGN §5 (private, no-cache)',
  run: perCollection(async (ctx, c) => {
    const reads = [c.list];
    const item = await samples.item(ctx, c);
    if (item?.status === 200) reads.push(item);
    // Credentials matter only when the API asks for them: without them the collection answers 401.
    const authenticated = ctx.options.headers.length > 0 && (await samples.anonymous(ctx, c)).status === 401;
    const evidence: Evidence[] = [];
    const problems: string[] = [];
    for (const x of reads) {
      const cc = x.headers['cache-control'];
      evidence.push(seen(x, cc ? `Cache-Control: ${cc}` : 'no Cache-Control'));
      if (!cc) problems.push(`${x.url.pathname} has no Cache-Control`);
      else if (authenticated && !/\b(private|no-store)\b/i.test(cc))
        problems.push(`${x.url.pathname} is an authenticated read with Cache-Control ${cc} (shared caches may keep it)`);
    }
    if (problems.length) return fail(problems.join('; '), evidence);
    return pass(authenticated ? 'authenticated reads are private' : 'reads declare their cacheability (anonymous reads: any policy)', evidence);
  }),
};
