// Discovery without writing (issue 30.1): collections from OpenAPI documents, from --path, and from the links of the root.
import { readFile } from 'node:fs/promises';
import type { Collection } from './context.js';
import { itemHref, linksOf, pageItems, versionOf } from './links.js';
import { collectionPaths, type DocumentCollection } from './openapi.js';
import { describe, ProbeError, type Probe } from './probe.js';
import type { CheckOptions, Exchange } from './types.js';

/** Where OpenAPI documents usually are, relative to the base URL. */
export const OPENAPI_LOCATIONS = ['openapi.json', 'v2/openapi.json', 'v1/openapi.json', 'docs/openapi.json', 'documentation/json'];
/** Bounds: collections probed (each costs a few dozen requests) and pages fetched while following links. */
const MAX_COLLECTIONS = 6;
const MAX_LINK_FETCHES = 12;

export interface Discovery {
  collections: Collection[];
  openapi: string | undefined;
  notes: string[];
  /** The first network trouble met while discovering: with no collection found, the rules report it as `error`. */
  trouble: string | undefined;
}

export async function discover(options: CheckOptions, probe: Probe): Promise<Discovery> {
  const notes: string[] = [];
  const trouble: { first?: string } = {};
  const candidates: URL[] = [];
  /** What documents say of each collection (its item key, its create body), by the path without a trailing slash. */
  const described = new Map<string, DocumentCollection>();
  const keyOf = (url: URL): string => url.href.replace(/\/+$/, '');
  // `/products` and `/products/` are one collection: the first form seen is the one probed.
  const add = (url: URL, doc?: DocumentCollection): void => {
    url.search = '';
    url.hash = '';
    if (doc && !described.has(keyOf(url))) described.set(keyOf(url), doc);
    if (!candidates.some((c) => keyOf(c) === keyOf(url))) candidates.push(url);
  };
  // 1. The paths the user named come first.
  for (const p of options.paths) add(probe.resolve(p));
  // 2. OpenAPI documents: the one given, else every one found at a usual location.
  let openapi: string | undefined;
  if (options.openapi) {
    let doc: unknown;
    try {
      doc = JSON.parse(await readFile(options.openapi, 'utf8')) as unknown;
    } catch (err) {
      throw new Error(`--openapi ${options.openapi}: ${err instanceof Error ? err.message : String(err)} (a JSON document is expected)`);
    }
    openapi = options.openapi;
    for (const p of collectionPaths(doc, options.baseUrl)) add(probe.resolve(p.path), p);
  } else {
    const found: string[] = [];
    for (const location of OPENAPI_LOCATIONS) {
      const x = await tryGet(probe, location, notes, trouble);
      if (x?.status === 200 && isDocument(x.json)) {
        found.push(x.url.pathname);
        for (const p of collectionPaths(x.json, x.url)) add(probe.follow(p.path, x.url) ?? probe.resolve(p.path), p);
      }
    }
    if (found.length > 0) openapi = found.join(', ');
  }
  // 3. The root and what its links lead to (two levels, bounded), when nothing above named a collection.
  const fetched = new Map<string, Exchange>();
  if (candidates.length === 0) {
    const queue: Array<{ url: URL; depth: number }> = [{ url: probe.resolve(''), depth: 0 }];
    while (queue.length > 0 && fetched.size < MAX_LINK_FETCHES) {
      const { url, depth } = queue.shift()!;
      if (fetched.has(url.href)) continue;
      const x = await tryGet(probe, url, notes, trouble);
      if (!x) continue;
      fetched.set(url.href, x);
      if (x.status !== 200) continue;
      if (pageItems(x.json) !== undefined) {
        add(new URL(url));
        continue;
      }
      if (depth >= 2) continue;
      for (const link of linksOf(x)) {
        const next = probe.follow(link.href, x.url);
        if (next && !/openapi|\.well-known|docs/.test(next.pathname)) queue.push({ url: next, depth: depth + 1 });
      }
    }
    if (candidates.length === 0) notes.push(`no collection found from the root's links (${fetched.size} pages read); give --path or --openapi`);
  }
  // Named paths first, as given; the found ones taken in turn from each version, so a cut keeps every version.
  const named = Math.min(options.paths.length, candidates.length);
  candidates.splice(named, candidates.length - named, ...byVersionInTurn(candidates.slice(named)));
  if (candidates.length > MAX_COLLECTIONS) {
    notes.push(
      `probing the first ${MAX_COLLECTIONS} of ${candidates.length} collections: ${candidates
        .slice(MAX_COLLECTIONS)
        .map((u) => u.pathname)
        .join(', ')} left out`,
    );
    candidates.length = MAX_COLLECTIONS;
  }
  const collections: Collection[] = [];
  for (const url of candidates) {
    const x = fetched.get(url.href) ?? (await tryGet(probe, url, notes, trouble));
    if (!x) continue;
    const items = pageItems(x.json);
    if (x.status !== 200 || items === undefined) {
      notes.push(`${describe('GET', url)} → ${x.status}: not a collection (${x.status === 200 ? 'no array of items in the body' : 'not 200'}), left out`);
      continue;
    }
    const doc = described.get(keyOf(url));
    const idField = doc?.idField ?? 'id';
    // A document that lists the collection but no item path under it (an event log, say) serves no items by id.
    const itemless = doc !== undefined && doc.idField === undefined;
    const href = items.length > 0 && !itemless ? itemHref(items[0], url, idField) : undefined;
    if (itemless && items.length > 0) notes.push(`${url.pathname}: the OpenAPI document has no item path under it, so no item is probed there`);
    const item = href === undefined ? undefined : probe.follow(href, url);
    if (items.length === 0) notes.push(`${url.pathname} is empty: the item rules have nothing to probe there`);
    collections.push({ url, version: versionOf(url), list: x, items, item, idField, createRequired: doc?.createRequired });
  }
  return { collections, openapi, notes, trouble: trouble.first };
}

/** `[/v2/a, /v2/b, /v1/a, /v1/b]` → `[/v2/a, /v1/a, /v2/b, /v1/b]`: versions in order of appearance, one each in turn. */
export function byVersionInTurn(urls: URL[]): URL[] {
  const groups = new Map<string, URL[]>();
  for (const u of urls) {
    const v = versionOf(u) ?? '';
    groups.set(v, [...(groups.get(v) ?? []), u]);
  }
  const out: URL[] = [];
  for (let i = 0; out.length < urls.length; i++) for (const g of groups.values()) if (g[i]) out.push(g[i]!);
  return out;
}

function isDocument(json: unknown): boolean {
  return typeof json === 'object' && json !== null && ('openapi' in json || 'swagger' in json) && 'paths' in json;
}

/** A GET whose network trouble becomes a note: discovery goes on with what it could read. */
async function tryGet(probe: Probe, target: string | URL, notes: string[], trouble: { first?: string }): Promise<Exchange | undefined> {
  try {
    return await probe.send('GET', target);
  } catch (err) {
    if (!(err instanceof ProbeError)) throw err;
    notes.push(`${err.request}: ${err.message}`);
    trouble.first ??= `${err.request}: ${err.message}`;
    return undefined;
  }
}
