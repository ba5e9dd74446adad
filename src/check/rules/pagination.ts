// Pagination rules (spec §2 pagination shapes, §4 "every collection endpoint must paginate", §8 limits).
import type { Collection, Context } from '../context.js';
import { pageItems } from '../links.js';
import { sizeParam, withQuery } from '../samples.js';
import { cursorOf, hasPaginationMarkers, identities, nextOf, STYLES } from '../styles.js';
import type { Evidence, Exchange } from '../types.js';
import { fail, isObject, notApplicable, pass, seen } from '../verdict.js';
import { perCollection, type Rule } from './rule.js';

/** Past this many items in one answer without any pagination, the list is taken as unbounded. */
const UNBOUNDED_ITEMS = 100;
/** A page size no API should grant. */
const HUGE_LIMIT = '100000';
/** Pages the next-link walk follows at most. */
const MAX_PAGES = 3;

/** The collection with a page size of 2 in its own style: the page the link and cursor rules walk. */
const smallPage = (ctx: Context, c: Collection): Promise<Exchange> => ctx.once(`small ${c.url.href}`, () => ctx.probe.send('GET', withQuery(c, { [sizeParam(c)]: '2' })));

const count = (x: Exchange): string => {
  const items = pageItems(x.json);
  return items === undefined ? 'not a list' : `${items.length} items${x.truncated ? ' (body cut at 8 MiB)' : ''}`;
};

export const bounded: Rule = {
  id: 'pagination.bounded',
  title: 'A collection read without parameters answers one bounded page, never the whole set',
  section: 'spec §4 Query parameters for collections ("every collection endpoint must paginate"); §8 Other bounds',
  run: perCollection(async (ctx, c) => {
    const evidence: Evidence[] = [seen(c.list, `${count(c.list)}${hasPaginationMarkers(c.list) ? ', with pagination fields or links' : ', no pagination fields or links'}`)];
    if (hasPaginationMarkers(c.list) && c.items.length <= UNBOUNDED_ITEMS && !c.list.truncated) return pass(`a page of ${c.items.length} items with pagination`, evidence);
    if (c.items.length > UNBOUNDED_ITEMS || c.list.truncated) return fail(`${count(c.list)} in one answer`, evidence);
    const one = await ctx.probe.send('GET', withQuery(c, { [sizeParam(c)]: '1' }));
    const n = pageItems(one.json)?.length;
    evidence.push(seen(one, count(one)));
    if (one.status === 200 && n !== undefined && n <= 1) return pass(`no pagination fields, but ${sizeParam(c)}=1 is honoured (the shape is pagination.shape's concern)`, evidence);
    return fail(`no pagination fields or links, and ${sizeParam(c)}=1 answered ${one.status} with ${count(one)}: the list cannot be paged`, evidence);
  }),
};

export const maxLimit: Rule = {
  id: 'pagination.max-limit',
  title: 'A page size over the maximum is refused with 400, not served',
  section: 'spec §8 Other bounds (collections always paginated; a maximum page size exists); §7 400',
  run: perCollection(async (ctx, c) => {
    const x = await ctx.probe.send('GET', withQuery(c, { [sizeParam(c)]: HUGE_LIMIT }));
    const evidence = [seen(x, x.status === 200 ? count(x) : `answered ${x.status}`)];
    return x.status === 400 ? pass(`${sizeParam(c)}=${HUGE_LIMIT} refused with 400`, evidence) : fail(`${sizeParam(c)}=${HUGE_LIMIT} answered ${x.status}, not 400`, evidence);
  }),
};

export const shape: Rule = {
  id: 'pagination.shape',
  title: "Each pagination style the API honours answers with that style's fields (offset, cursor, page, token, keyset)",
  section: 'spec §2 Shapes shared by all resources (pagination objects, token style); §4 Query parameters for collections',
  run: perCollection(async (ctx, c) => {
    const evidence: Evidence[] = [];
    const problems: string[] = [];
    const honoured: string[] = [];
    const total = c.items.length;
    for (const style of STYLES) {
      const params = style.params(c, 2);
      if (params === undefined) continue;
      const x = await ctx.probe.send('GET', withQuery(c, params));
      const items = pageItems(x.json);
      const body = isObject(x.json) ? x.json : {};
      if (x.status === 400 || x.status === 422) {
        evidence.push(seen(x, `${style.name}: refused, not offered`));
        continue;
      }
      if (x.status !== 200 || items === undefined) {
        problems.push(`${style.name}: answered ${x.status} ${items === undefined ? 'without a list' : ''}`.trim());
        evidence.push(seen(x, `${style.name}: answered ${x.status}`));
        continue;
      }
      const sized = items.length <= 2;
      if (style.detected(body)) {
        const missing = style.problems(body);
        evidence.push(seen(x, `${style.name}: ${missing.length ? missing.join(', ') : 'complete shape'}`));
        if (missing.length) problems.push(`${style.name}: ${missing.join(', ')}`);
        else honoured.push(style.name);
      } else if (sized && total > 2 && (style.name === 'offset' || style.name === 'page')) {
        // The page size was honoured, so the style is offered, but the answer has none of its fields (a bare `limit`
        // is shared by the cursor, offset and keyset styles: the offset request speaks for it).
        const what = Array.isArray(x.json) ? 'a bare array' : `keys ${Object.keys(body).join(', ')}`;
        evidence.push(seen(x, `${style.name}: ${items.length} items in ${what}, no ${style.name} fields`));
        problems.push(`${style.name} parameters honoured, but the answer is ${what} without the spec §2 fields`);
      } else {
        evidence.push(seen(x, `${style.name}: ${sized ? 'no fields of this style' : `${items.length} items: parameters ignored`}, not offered`));
      }
    }
    if (problems.length) return fail(problems.join('; '), evidence);
    if (honoured.length === 0) return notApplicable('no pagination style was detected', evidence);
    return pass(`styles with a complete shape: ${honoured.join(', ')}`, evidence);
  }),
};

export const nextLinks: Rule = {
  id: 'pagination.next',
  title: 'The next page (Link header, links rel=next, or cursor) is reachable, new items only, same shape; Link and body agree',
  section: 'spec §2 Hypermedia link entry (relations next, prev); §4 pagination parameters',
  run: perCollection(async (ctx, c) => {
    let page = await smallPage(ctx, c);
    const evidence: Evidence[] = [seen(page, count(page))];
    if (page.status !== 200) return fail(`${sizeParam(c)}=2 answered ${page.status}`, evidence);
    const seenIds = new Set(identities(page));
    const keys = isObject(page.json) ? Object.keys(page.json).sort().join(',') : 'array';
    const problems: string[] = [];
    let walked = 0;
    for (let i = 0; i < MAX_PAGES; i++) {
      const header = nextOf({ ...page, json: undefined });
      const any = nextOf(page);
      const body = nextOf({ ...page, headers: {} });
      if (header && body && header.url !== body.url && body.from === 'links rel=next') problems.push(`Link next ${header.url} ≠ links next ${body.url}`);
      if (!any) break;
      const next = await ctx.probe.send('GET', any.url);
      walked++;
      const ids = identities(next);
      const repeated = ids.filter((id) => seenIds.has(id));
      const nextKeys = isObject(next.json) ? Object.keys(next.json).sort().join(',') : 'array';
      evidence.push(seen(next, `via ${any.from}: ${count(next)}${repeated.length ? `, ${repeated.length} already seen` : ''}`));
      if (next.status !== 200) problems.push(`next page answered ${next.status}`);
      else if (ids.length === 0) problems.push('a next page that is empty (the previous page should not have offered one)');
      if (repeated.length) problems.push(`next page repeats ${repeated.length} items of earlier pages`);
      if (next.status === 200 && nextKeys !== keys) problems.push(`next page has keys ${nextKeys}, the first ${keys}`);
      if (next.status !== 200) break;
      ids.forEach((id) => seenIds.add(id));
      page = next;
    }
    if (problems.length) return fail(problems.join('; '), evidence);
    if (walked === 0) {
      // A page that claims more (has_more, a total past it) must say how to get there; one with no pagination
      // fields at all is pagination.shape's failure, not this rule's.
      const body = isObject(page.json) ? page.json : {};
      const p = isObject(body.pagination) ? body.pagination : {};
      const total = Number.isInteger(p.total) ? (p.total as number) : Number.isInteger(body.total) ? (body.total as number) : undefined;
      const claimsMore = p.has_more === true || body.has_more === true || (total !== undefined && total > (pageItems(page.json)?.length ?? 0));
      if (claimsMore) return fail(`the page says more items follow${p.has_more === true ? ' (has_more: true)' : ''}, but offers no next link, cursor, token or offset`, evidence);
      if (!hasPaginationMarkers(page) && c.items.length > 2) return notApplicable('the page of 2 has no pagination fields to follow (see pagination.shape)', evidence);
      return notApplicable('the collection fits in one page of 2', evidence);
    }
    return pass(`followed ${walked} next page(s): reachable, no repeats, same shape`, evidence);
  }),
};

/** The cursor with one character in its middle changed to another of the same alphabet. */
export function tamper(cursor: string): string {
  const i = Math.floor(cursor.length / 2);
  const ch = cursor[i]!;
  const swap = /[0-9]/.test(ch) ? String((Number(ch) + 1) % 10) : ch === 'A' ? 'B' : ch === 'a' ? 'b' : /[A-Za-z]/.test(ch) ? 'A' : 'x';
  return cursor.slice(0, i) + swap + cursor.slice(i + 1);
}

export const cursorTamper: Rule = {
  id: 'pagination.cursor-tamper',
  title: 'A cursor or page token changed by the client is refused with 400',
  section: 'spec §4 Query parameters for collections (the cursor is opaque); §2 token style (the token is opaque to clients); §7 400',
  run: perCollection(async (ctx, c) => {
    const page = await smallPage(ctx, c);
    const cursor = cursorOf(page);
    if (!cursor) return notApplicable('no opaque cursor or page token seen (offset or page styles only, or one page)', [seen(page, count(page))]);
    const url = withQuery(c, { [sizeParam(c)]: '2', [cursor.param]: tamper(cursor.value) });
    const x = await ctx.probe.send('GET', url);
    const evidence = [seen(page, `${cursor.param} ${cursor.value.slice(0, 24)}…`), seen(x, `one character changed: answered ${x.status}`)];
    return x.status === 400 ? pass(`a changed ${cursor.param} is refused with 400`, evidence) : fail(`a changed ${cursor.param} answered ${x.status}, not 400`, evidence);
  }),
};
