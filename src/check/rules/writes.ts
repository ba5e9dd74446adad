// Rules that write (only with --write; every object created is deleted): 201 + Location, 204, 415 and 412.
import { samples } from '../samples.js';
import type { Evidence } from '../types.js';
import { fail, notApplicable, pass, seen } from '../verdict.js';
import { create, onWritable, remove, track, untrack, variant } from '../writes.js';
import type { Rule } from './rule.js';

export const createDelete: Rule = {
  id: 'methods.create-delete',
  title: 'POST creates with 201 and a Location that reads the object; DELETE answers 204 without a body; a repeat is 404',
  section: 'spec §4 Method semantics and Generic endpoints (201 with Location; 204 without body; a repeated DELETE may answer 404)',
  needs: 'write',
  run: (ctx) =>
    onWritable(ctx, async ({ collection: c, template }) => {
      const evidence: Evidence[] = [];
      const problems: string[] = [];
      const { x, url } = await create(ctx, c, variant(template), {}, 'methods.create-delete');
      evidence.push(seen(x, `Location: ${x.headers.location ?? 'absent'}`));
      if (x.status !== 201) problems.push(`POST answered ${x.status}, not 201`);
      if (!x.headers.location) problems.push('no Location header');
      if (!url) return fail(problems.join('; '), evidence);
      const read = await ctx.probe.send('GET', url);
      evidence.push(seen(read, 'the created object'));
      if (read.status !== 200) problems.push(`GET of the created object answered ${read.status}`);
      const del = await remove(ctx, url);
      if (del) {
        evidence.push(seen(del, del.text.length ? `a body of ${del.text.length} bytes` : 'no body'));
        if (del.status !== 204) problems.push(`DELETE answered ${del.status}, not 204`);
        else if (del.text.length) problems.push('DELETE 204 with a body');
        const again = await ctx.probe.send('DELETE', url);
        evidence.push(seen(again, 'the same DELETE again'));
        if (again.status !== 404 && again.status !== 410 && again.status !== 204) problems.push(`a repeated DELETE answered ${again.status}`);
      }
      return problems.length ? fail(problems.join('; '), evidence) : pass('201 + Location, 204, then 404', evidence);
    }),
};

export const unsupportedMediaType: Rule = {
  id: 'status.unsupported-media-type',
  title: 'A body in a format the API does not take (text/plain) is refused: 415 (or 400/422), never taken',
  section: 'spec §1 (requests declare the body format with Content-Type; bodies are JSON); RFC 9110 §15.5.16; DESIGN §4',
  needs: 'write',
  run: (ctx) =>
    onWritable(ctx, async ({ collection: c }) => {
      const x = await ctx.probe.send('POST', c.url, { headers: { 'content-type': 'text/plain' }, body: 'canon check' });
      const evidence = [seen(x, 'Content-Type: text/plain')];
      const url = track(ctx, c, x, 'created by a text/plain POST');
      if (url) await remove(ctx, url);
      if (x.status === 415) return pass('415 for text/plain', evidence);
      // The spec's status table has no 415: refusing the body as invalid data (400, 422) also keeps it out.
      if (x.status === 400 || x.status === 422) return pass(`refused with ${x.status} (415 is the precise status, RFC 9110 §15.5.16)`, evidence);
      return fail(`answered ${x.status}: ${x.status < 300 ? 'a text/plain body was taken' : 'neither 415 nor a client error'}`, evidence);
    }),
};

export const precondition: Rule = {
  id: 'caching.precondition',
  title: 'A write with an If-Match that no longer matches answers 412 and changes nothing',
  section: 'spec §1 (ETag); §7 Status codes; RFC 9110 §13.1.1 If-Match; DESIGN §5',
  needs: 'write',
  run: (ctx) =>
    onWritable(ctx, async ({ collection: c, template }) => {
      // RFC 9110 §13.2.1: a resource without validators may ignore If-Match; caching.etag judges the missing ETag.
      const item = await samples.item(ctx, c);
      if (!item?.headers.etag) return notApplicable('the items have no ETag, so If-Match has nothing to compare (see caching.etag)', item ? [seen(item, 'no ETag')] : []);
      const { x, url } = await create(ctx, c, variant(template), {}, 'caching.precondition');
      const evidence = [seen(x, 'an object to write to')];
      if (!url) return notApplicable(`the create answered ${x.status}`, evidence);
      const stale = await ctx.probe.send('DELETE', url, { headers: { 'if-match': '"canon-check-stale"' } });
      evidence.push(seen(stale, 'If-Match: "canon-check-stale"'));
      if (stale.status >= 200 && stale.status < 300) untrack(ctx, url);
      else await remove(ctx, url);
      return stale.status === 412
        ? pass('412 for a stale If-Match', evidence)
        : fail(`a stale If-Match answered ${stale.status}, not 412${stale.status < 300 ? ': the object was deleted anyway' : ''}`, evidence);
    }),
};
