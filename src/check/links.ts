// Reading hypermedia: RFC 8288 Link headers, `links` arrays and `_links` objects (spec §2 link entry), page items and item URLs.
import type { Exchange } from './types.js';
import { isObject } from './verdict.js';

export interface FoundLink {
  rel: string;
  href: string;
  /** Where it was: the Link header or the body. */
  from: 'header' | 'body';
}

/** `<…>; rel="next", <…>; rel="prev"` (RFC 8288 §3); several rels in one value give one entry each. */
export function parseLinkHeader(value: string | undefined): FoundLink[] {
  if (!value) return [];
  const out: FoundLink[] = [];
  const re = /<([^>]*)>((?:\s*;\s*[^;,]+(?:="[^"]*"|=[^;,]*)?)*)/g;
  for (let m = re.exec(value); m !== null; m = re.exec(value)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]*))/i.exec(m[2] ?? '');
    for (const r of (rel?.[1] ?? rel?.[2] ?? '').split(/\s+/).filter(Boolean)) out.push({ rel: r.toLowerCase(), href: m[1]!, from: 'header' });
  }
  return out;
}

/** `links: [{rel, href}]` or `_links: {rel: {href} | [{href}]}` in a body (spec §2 hypermedia link entry). */
export function bodyLinks(body: unknown): FoundLink[] {
  if (!isObject(body)) return [];
  const out: FoundLink[] = [];
  if (Array.isArray(body.links)) {
    for (const l of body.links) if (isObject(l) && typeof l.href === 'string' && typeof l.rel === 'string') out.push({ rel: l.rel.toLowerCase(), href: l.href, from: 'body' });
  }
  if (isObject(body._links)) {
    for (const [rel, v] of Object.entries(body._links)) {
      for (const l of Array.isArray(v) ? v : [v]) if (isObject(l) && typeof l.href === 'string') out.push({ rel: rel.toLowerCase(), href: l.href, from: 'body' });
    }
  }
  return out;
}

/** Every link of a response, header first. */
export function linksOf(x: Exchange): FoundLink[] {
  return [...parseLinkHeader(x.headers.link), ...bodyLinks(x.json)];
}

/** The items of a collection page: a bare array, or the array under `data`, `items`, `results` or HAL `_embedded`. */
export function pageItems(body: unknown): unknown[] | undefined {
  if (Array.isArray(body)) return body;
  if (!isObject(body)) return undefined;
  for (const key of ['data', 'items', 'results']) if (Array.isArray(body[key])) return body[key] as unknown[];
  if (isObject(body._embedded)) for (const v of Object.values(body._embedded)) if (Array.isArray(v)) return v as unknown[];
  return undefined;
}

/** Where an item lives: its `self` link, a `url` field, or the collection URL plus its id (`idField`: a document's key). */
export function itemHref(item: unknown, collection: URL, idField = 'id'): string | undefined {
  if (!isObject(item)) return undefined;
  const self = bodyLinks(item).find((l) => l.rel === 'self');
  if (self) return new URL(self.href, collection).href;
  if (typeof item.url === 'string' && /^(https?:|\/)/.test(item.url)) return new URL(item.url, collection).href;
  const id = item[idField] ?? item.id;
  if (typeof id === 'string' || typeof id === 'number') return `${collection.href.replace(/\/+$/, '')}/${encodeURIComponent(String(id))}`;
  return undefined;
}

/** `v2` from `/api/v2/products` (spec §4: the version segment is `v<integer>`). */
export function versionOf(url: URL): string | undefined {
  return /\/(v\d+)(?:\/|$)/.exec(url.pathname)?.[1];
}
