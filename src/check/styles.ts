// The five pagination styles of spec §2/§4 (offset, cursor, page, token, keyset): how to ask for each, and its shape.
import type { Collection } from './context.js';
import { linksOf, pageItems } from './links.js';
import type { Exchange } from './types.js';
import { isObject } from './verdict.js';

export type StyleName = 'cursor' | 'offset' | 'page' | 'token' | 'keyset';

export interface Style {
  name: StyleName;
  /** The request for a page of `size` items (keyset: after the collection's first item). */
  params(c: Collection, size: number): Record<string, string> | undefined;
  /** Does the answer carry this style's fields at all? */
  detected(body: Record<string, unknown>): boolean;
  /** What its shape lacks (spec §2 tables), empty when complete. */
  problems(body: Record<string, unknown>): string[];
}

const pag = (body: Record<string, unknown>): Record<string, unknown> => (isObject(body.pagination) ? body.pagination : {});
const isInt = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 0;
const need = (o: Record<string, unknown>, fields: Array<[string, (v: unknown) => boolean, string]>): string[] =>
  fields.filter(([k, ok]) => !ok(o[k])).map(([k, , type]) => `pagination.${k} ${k in o ? `is not ${type}` : 'is missing'}`);

function firstId(c: Collection): string | undefined {
  const first = c.items[0];
  return isObject(first) && (typeof first.id === 'string' || typeof first.id === 'number') ? String(first.id) : undefined;
}

export const STYLES: Style[] = [
  {
    name: 'cursor',
    params: (_c, size) => ({ limit: String(size) }),
    detected: (b) => 'next_cursor' in pag(b),
    problems: (b) =>
      need(pag(b), [
        ['next_cursor', (v) => v === null || typeof v === 'string', 'a string or null'],
        ['has_more', (v) => typeof v === 'boolean', 'a boolean'],
      ]),
  },
  {
    name: 'offset',
    params: (_c, size) => ({ offset: '0', limit: String(size) }),
    detected: (b) => 'offset' in pag(b) || 'total' in b || 'offset' in b,
    problems: (b) =>
      need(pag(b), [
        ['offset', isInt, 'an integer'],
        ['limit', isInt, 'an integer'],
        ['total', isInt, 'an integer'],
      ]),
  },
  {
    name: 'page',
    params: (_c, size) => ({ page: '1', per_page: String(size) }),
    detected: (b) => 'page' in pag(b) || 'per_page' in pag(b) || 'page' in b,
    problems: (b) =>
      need(pag(b), [
        ['page', isInt, 'an integer'],
        ['per_page', isInt, 'an integer'],
        ['total', isInt, 'an integer'],
      ]),
  },
  {
    name: 'token',
    params: (_c, size) => ({ page_size: String(size) }),
    detected: (b) => 'next_page_token' in b,
    problems: (b) => (b.next_page_token === undefined || typeof b.next_page_token === 'string' ? [] : ['next_page_token is not a string']),
  },
  {
    name: 'keyset',
    params: (c, size) => {
      const id = firstId(c);
      return id === undefined ? undefined : { after_id: id, limit: String(size) };
    },
    detected: (b) => 'has_more' in pag(b) && !('next_cursor' in pag(b)),
    problems: (b) => need(pag(b), [['has_more', (v) => typeof v === 'boolean', 'a boolean']]),
  },
];

/** Does a page show any sign of pagination: a pagination object, a token, a total, a `next` link? */
export function hasPaginationMarkers(x: Exchange): boolean {
  const b = x.json;
  if (linksOf(x).some((l) => l.rel === 'next' || l.rel === 'prev' || l.rel === 'last')) return true;
  if (!isObject(b)) return false;
  return isObject(b.pagination) || 'next_page_token' in b || 'total' in b || 'has_more' in b || 'next_cursor' in b || 'next' in b;
}

/** The `next` page of an answer: a Link header or `links` entry, else a URL built from its cursor or token. */
export function nextOf(x: Exchange): { url: string; from: string } | undefined {
  const links = linksOf(x).filter((l) => l.rel === 'next');
  const link = links.find((l) => l.from === 'header') ?? links[0];
  if (link) return { url: new URL(link.href, x.url).href, from: link.from === 'header' ? 'Link header' : 'links rel=next' };
  const b = x.json;
  if (!isObject(b)) return undefined;
  const p = pag(b);
  const url = new URL(x.url);
  if (typeof p.next_cursor === 'string' && p.next_cursor) {
    url.searchParams.set('cursor', p.next_cursor);
    return { url: url.href, from: 'pagination.next_cursor' };
  }
  if (typeof b.next_page_token === 'string' && b.next_page_token) {
    url.searchParams.set('page_token', b.next_page_token);
    return { url: url.href, from: 'next_page_token' };
  }
  // Offset and page styles need no link: their fields say where the next page starts (spec §2).
  const n = (v: unknown): number | undefined => (Number.isInteger(v) ? (v as number) : undefined);
  const [offset, limit, page, perPage, total] = [n(p.offset), n(p.limit), n(p.page), n(p.per_page), n(p.total)];
  if (offset !== undefined && limit !== undefined && total !== undefined && offset + limit < total) {
    url.searchParams.set('offset', String(offset + limit));
    return { url: url.href, from: 'pagination.offset + limit' };
  }
  if (page !== undefined && perPage !== undefined && total !== undefined && page * perPage < total) {
    url.searchParams.set('page', String(page + 1));
    return { url: url.href, from: 'pagination.page + 1' };
  }
  return undefined;
}

/** An opaque cursor or token of a page, and the parameter that carries it. */
export function cursorOf(x: Exchange): { param: string; value: string } | undefined {
  const b = x.json;
  if (!isObject(b)) return undefined;
  if (typeof pag(b).next_cursor === 'string' && pag(b).next_cursor) return { param: 'cursor', value: pag(b).next_cursor as string };
  if (typeof b.next_page_token === 'string' && b.next_page_token) return { param: 'page_token', value: b.next_page_token };
  const next = nextOf(x);
  if (next) {
    const u = new URL(next.url);
    for (const param of ['cursor', 'page_token', 'after', 'starting_after']) {
      const v = u.searchParams.get(param);
      if (v) return { param, value: v };
    }
  }
  return undefined;
}

/** Items' identities for overlap checks: ids when they have them, else their JSON. */
export function identities(x: Exchange): string[] {
  return (pageItems(x.json) ?? []).map((i) => (isObject(i) && i.id !== undefined ? `id:${String(i.id)}` : JSON.stringify(i)));
}
