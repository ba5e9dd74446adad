// Renders a collection page (src/services/list-pages.ts) in its pagination style's envelope: data, pagination, links and the RFC 8288 Link header.
import type { CompiledResource } from '../../model/compile.js';
import type { ApiVersion } from '../../model/versions.js';
import type { QueryInput } from '../../query/list-params.js';
import { planFor } from '../routes/list-plans.js';
import type { Ctx, ParentRef } from '../../services/resource-service.js';
import type { Page, PageStart } from '../../services/list-pages.js';
import type { HttpDeps } from '../deps.js';
import { etagOf, pageEtagOf } from './conditional.js';
import { itemJson } from './object-body.js';
import type { Link } from './render.js';

/** The request's path and query with some parameters replaced, for next/prev links. */
function withParams(url: string, changes: Record<string, string>): string {
  const [path, query = ''] = url.split('?', 2) as [string, string?];
  const params = new URLSearchParams(query);
  for (const [k, v] of Object.entries(changes)) params.set(k, v);
  return `${path}?${params.toString()}`;
}

/** The query parameters that ask for the page starting at `start` (DESIGN §6), in the order links show them. */
function paramsOf(start: PageStart): Record<string, string> {
  switch (start.style) {
    case 'cursor':
      return { cursor: start.position };
    case 'token':
      return { page_token: start.position };
    case 'keyset':
      return { after_id: start.afterId };
    case 'offset':
      return { offset: String(start.offset), limit: String(start.limit) };
    case 'page':
      return { page: String(start.page), per_page: String(start.limit) };
  }
}

/** A page as sent: its JSON text and its weak validator. */
export interface ListBody {
  json: string;
  etag: string;
}

/** A rendered page and the page's own part of the Link header (next, prev), when it has one. */
export interface RenderedList extends ListBody {
  readonly link: string | undefined;
}

/**
 * A list request as plain inputs, so that the Fastify route and the lean list path (src/http/transport/fast-lists.ts)
 * render through this one function and cannot drift apart.
 */
export interface ListRequest {
  /** The URL the route matched: its query string keys the plan. */
  url: string;
  /** The URL as the client sent it (self, next and prev): under the query strategy its `version=` stays (src/http/versioning/version-selection.ts). */
  originalUrl: string;
  /** The query as the app's querystring parser gave it (src/http/transport/query-string.ts). */
  query: QueryInput;
  ctx: Ctx;
  parent: ParentRef | undefined;
  /** Whether the caller may create in this collection: the page then links to the create. */
  canCreate: boolean;
}

/** A response's Link header with a page's own part added beside what is there (a deprecated version's rel="deprecation", RFC 8288 §3). */
export function withPageLink(existing: unknown, link: string): string {
  return existing ? `${String(existing)}, ${link}` : link;
}

/**
 * Renderings of shared store results (a page the list cache keeps, frozen, until the data changes), by everything
 * else the text depends on: the API version, the collection (scope), the URL as sent (self, next and prev, the
 * plan), whether the caller may create, and each row's id and ETag (the ETag names the record's version, the links
 * this caller may follow and the API version). Equal keys on one result mean equal bytes. At most a few per result:
 * callers with other links or URLs for the same rows make their own.
 */
const renderings = new WeakMap<object, Map<string, RenderedList>>();
const RENDERINGS_PER_RESULT = 8;

/** The page `request` asks for, rendered: its text, validator and Link header part (which the caller adds beside its own, withPageLink). */
export async function renderList(deps: HttpDeps, version: ApiVersion, r: CompiledResource, request: ListRequest): Promise<RenderedList> {
  const { parent, canCreate } = request;
  // Cursors are bound to this collection: this version, this resource, under this parent (issue 13.6).
  const scope = `${version.name}/${parent ? `${parent.resource}/${parent.id}/` : ''}${r.name}`;
  const at = request.url.indexOf('?');
  const plan = planFor(version, r, scope, at < 0 ? '' : request.url.slice(at), request.query, deps.secret);
  const page = await deps.pages.page(request.ctx, r.name, plan, parent);
  const self = request.originalUrl;
  const etags: string[] = new Array<string>(page.rows.length);
  let validators = '';
  for (let i = 0; i < page.rows.length; i++) {
    const loaded = page.rows[i]!;
    etags[i] = etagOf(loaded.record, loaded.access, version.name);
    validators += `${loaded.record.id}${etags[i]},`;
  }
  const key = page.shared === undefined ? undefined : `${version.name}\n${scope}\n${self}\n${canCreate ? 'c' : '-'}\n${validators}`;
  let rendered = key === undefined ? undefined : renderings.get(page.shared!)?.get(key);
  if (rendered === undefined) {
    rendered = renderPage(version, r, page, self, canCreate, etags, validators);
    if (key !== undefined) {
      let byKey = renderings.get(page.shared!);
      if (byKey === undefined) renderings.set(page.shared!, (byKey = new Map()));
      if (byKey.size < RENDERINGS_PER_RESULT) byKey.set(key, rendered);
    }
  }
  return rendered;
}

/** The page's text, validator and Link header part; `etags` and `validators` as renderList computed them per row. */
function renderPage(version: ApiVersion, r: CompiledResource, page: Page, self: string, canCreate: boolean, etags: readonly string[], validators: string): RenderedList {
  const { plan } = page;
  const p = plan.page;
  const next = page.next ? withParams(self, paramsOf(page.next)) : undefined;
  const prev = page.prev ? withParams(self, paramsOf(page.prev)) : undefined;
  // Everything but `data`, in the order the page shows it (data, then pagination, then links).
  const body: Record<string, unknown> = {};
  switch (p.style) {
    case 'cursor':
      body.pagination = { next_cursor: page.position, has_more: page.hasMore };
      break;
    case 'token':
      if (page.position !== null) body.next_page_token = page.position;
      break;
    case 'keyset':
      body.pagination = { has_more: page.hasMore };
      break;
    case 'offset':
      body.pagination = { offset: p.offset, limit: p.limit, total: page.total };
      break;
    case 'page':
      body.pagination = { page: p.page, per_page: p.limit, total: page.total };
      break;
  }
  const links: Link[] = [{ rel: 'self', href: self, method: 'GET' }];
  const header: string[] = [];
  if (next) {
    links.push({ rel: 'next', href: next, method: 'GET' });
    header.push(`<${next}>; rel="next"`);
  }
  if (prev) {
    links.push({ rel: 'prev', href: prev, method: 'GET' });
    header.push(`<${prev}>; rel="prev"`);
  }
  if (canCreate) links.push({ rel: 'create', href: self.split('?')[0]!, method: 'POST' });
  body.links = links;
  // Items are joined as rendered texts (src/http/rendering/object-body.ts): the same bytes JSON.stringify of the whole page
  // gave, without serialising again what is memoised per record. `body` always holds links, so it is never `{}`.
  // The page's validator digests what determines its bytes rather than the bytes: each item's text follows from
  // its id and ETag (which names the record's version, the caller's links and the API version) and the fields
  // the URL asks for; the rest is the envelope itself. A quarter of the input of hashing the page.
  const envelope = JSON.stringify(body);
  let items = '';
  for (let i = 0; i < page.rows.length; i++) items += (i === 0 ? '' : ',') + itemJson(version, r, page.rows[i]!, etags[i]!, plan.fields, true);
  return {
    json: `{"data":[${items}],${envelope.slice(1)}`,
    etag: pageEtagOf(`${envelope}\n${plan.fields?.join(',') ?? '*'}\n${validators}`),
    link: header.length ? header.join(', ') : undefined,
  };
}
