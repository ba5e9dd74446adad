// Probes several rules judge (the status rules, the error-body rule, the request-id rule), each sent once per collection.
import { randomUUID } from 'node:crypto';
import type { Collection, Context } from './context.js';
import type { Exchange } from './types.js';
import { isObject } from './verdict.js';

/** The page-size parameter of the collection's pagination style (spec §4 query parameters). */
export function sizeParam(c: Collection): string {
  const body = c.list.json;
  if (isObject(body) && 'next_page_token' in body) return 'page_size';
  if (isObject(body) && isObject(body.pagination) && 'per_page' in body.pagination) return 'per_page';
  return 'limit';
}

/** A URL of the collection with these query parameters. */
export function withQuery(c: Collection, params: Record<string, string>): URL {
  const url = new URL(c.url);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url;
}

/** An item's key, if it has one. */
function keyOf(c: Collection, item: unknown): unknown {
  return isObject(item) ? (item[c.idField] ?? item.id) : undefined;
}

/**
 * An id no object has, in the form the collection's ids take (a number, a UUID, or some other string), learnt from
 * its first item, else from another collection's (an empty collection shows none). `guessed`: no item anywhere.
 */
export function missingId(ctx: Context, c: Collection): { id: string; guessed: boolean } {
  const id = keyOf(c, c.items[0]) ?? ctx.collections.map((k) => keyOf(k, k.items[0])).find((v) => v !== undefined);
  if (typeof id === 'number' || (typeof id === 'string' && /^\d+$/.test(id))) return { id: String(2_000_000_000 + Math.floor(Math.random() * 100_000_000)), guessed: false };
  if (typeof id === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(id)) return { id: randomUUID(), guessed: false };
  if (typeof id === 'string') return { id: `canon-check-missing-${randomUUID().slice(0, 8)}`, guessed: false };
  return { id: randomUUID(), guessed: true };
}

export const samples = {
  /** GET of one item of the collection; undefined when the collection is empty. */
  item: (ctx: Context, c: Collection): Promise<Exchange | undefined> => ctx.once(`item ${c.url.href}`, async () => (c.item ? ctx.probe.send('GET', c.item) : undefined)),
  options: (ctx: Context, url: URL): Promise<Exchange> => ctx.once(`options ${url.href}`, () => ctx.probe.send('OPTIONS', url)),
  /** GET of an id that does not exist: 404 (spec §7). */
  missingItem: (ctx: Context, c: Collection): Promise<Exchange> =>
    ctx.once(`missing ${c.url.href}`, () => ctx.probe.send('GET', `${c.url.href.replace(/\/+$/, '')}/${encodeURIComponent(missingId(ctx, c).id)}`)),
  /** GET of a path no route serves, beside the collection (under its version): 404. */
  missingRoute: (ctx: Context, c: Collection): Promise<Exchange> =>
    ctx.once(`no-route ${c.url.href}`, () => ctx.probe.send('GET', new URL(`canon-check-no-such-collection-${randomUUID().slice(0, 8)}`, c.url.href.replace(/\/+$/, '')))),
  /** A page size that is not a number: 400 (spec §7, "invalid syntax or data"). */
  badQuery: (ctx: Context, c: Collection): Promise<Exchange> => ctx.once(`bad-query ${c.url.href}`, () => ctx.probe.send('GET', withQuery(c, { [sizeParam(c)]: 'abc' }))),
  /** An Accept that allows no JSON: 406. */
  notAcceptable: (ctx: Context, c: Collection): Promise<Exchange> => ctx.once(`406 ${c.url.href}`, () => ctx.probe.send('GET', c.url, { headers: { accept: 'image/png' } })),
  /** The collection without the --header values: 401 when it needs credentials. */
  anonymous: (ctx: Context, c: Collection): Promise<Exchange> => ctx.once(`anonymous ${c.url.href}`, () => ctx.probe.send('GET', c.url, { auth: false })),
  /**
   * A method the collection does not support: a write method its Allow leaves out (never one it allows, so nothing
   * is written), else TRACE, a safe method (RFC 9110 §9.3.8) APIs rarely serve.
   */
  notAllowed: (ctx: Context, c: Collection): Promise<Exchange> =>
    ctx.once(`405 ${c.url.href}`, async () => {
      const allow = allowOf(await samples.options(ctx, c.url));
      const method = allow === undefined ? undefined : ['PUT', 'PATCH', 'DELETE'].find((m) => !allow.includes(m));
      if (method === undefined) return ctx.probe.send('TRACE', c.url);
      return ctx.probe.send(method, c.url, { headers: { 'content-type': 'application/json' }, body: '{}' });
    }),
};

/** The methods an `Allow` header lists, upper-case; undefined without one. */
export function allowOf(x: Exchange): string[] | undefined {
  const allow = x.headers.allow;
  return allow === undefined
    ? undefined
    : allow
        .split(',')
        .map((m) => m.trim().toUpperCase())
        .filter(Boolean);
}
