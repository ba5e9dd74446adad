// Renders a collection page in the requested pagination style: data, pagination, links and the RFC 8288 Link header.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CompiledResource } from '../model/compile.js';
import type { ApiVersion } from '../model/versions.js';
import { encodeNext, parseListParams, type ListPlan, type QueryInput } from '../query/list-params.js';
import type { ListQuery } from '../store/types.js';
import type { Ctx, ParentRef } from '../services/resource-service.js';
import type { HttpDeps } from './deps.js';
import type { Link } from './render.js';
import { represent } from './render.js';

/** The request's path and query with some parameters replaced, for next/prev links. */
function withParams(url: string, changes: Record<string, string>): string {
  const [path, query = ''] = url.split('?', 2) as [string, string?];
  const params = new URLSearchParams(query);
  for (const [k, v] of Object.entries(changes)) params.set(k, v);
  return `${path}?${params.toString()}`;
}

function storeQuery(plan: ListPlan): ListQuery {
  const base = { where: plan.where, orderBy: plan.orderBy, ...(plan.search !== undefined ? { search: plan.search } : {}) };
  const p = plan.page;
  switch (p.style) {
    case 'offset':
    case 'page':
      return { ...base, limit: p.limit, offset: p.offset, withTotal: true };
    case 'keyset':
      // One extra row tells whether another page exists without counting the whole set.
      return { ...base, limit: p.limit + 1, ...(p.afterId ? { after: [p.afterId] } : {}) };
    default:
      return { ...base, limit: p.limit + 1, ...(p.after ? { after: p.after } : {}) };
  }
}

export async function renderList(
  deps: HttpDeps, version: ApiVersion, r: CompiledResource, request: FastifyRequest, reply: FastifyReply, ctx: Ctx, parent: ParentRef | undefined, canCreate: boolean,
): Promise<Record<string, unknown>> {
  // Cursors are bound to this collection: this version, this resource, under this parent (issue 13.6).
  const plan = parseListParams(r, request.query as QueryInput, deps.secret, `${version.name}/${parent ? `${parent.resource}/${parent.id}/` : ''}${r.name}`);
  const result = await deps.services.list(ctx, r.name, storeQuery(plan), parent);
  const p = plan.page;
  const hasMore = p.style === 'offset' || p.style === 'page' ? p.offset + p.limit < (result.total ?? 0) : result.rows.length > p.limit;
  const rows = result.rows.slice(0, p.limit);
  const self = request.url;
  let next: string | undefined;
  let prev: string | undefined;
  const body: Record<string, unknown> = { data: rows.map((loaded) => represent(version, r, loaded, plan.fields)) };
  const last = rows[rows.length - 1];
  switch (p.style) {
    case 'cursor': {
      const cursor = hasMore && last ? encodeNext(plan, last.record, result.ranks?.[rows.length - 1], deps.secret) : null;
      if (cursor) next = withParams(self, { cursor });
      body.pagination = { next_cursor: cursor, has_more: hasMore };
      break;
    }
    case 'token': {
      if (hasMore && last) {
        const token = encodeNext(plan, last.record, result.ranks?.[rows.length - 1], deps.secret);
        next = withParams(self, { page_token: token });
        body.next_page_token = token;
      }
      break;
    }
    case 'keyset':
      if (hasMore && last) next = withParams(self, { after_id: last.record.id });
      body.pagination = { has_more: hasMore };
      break;
    case 'offset':
      if (hasMore) next = withParams(self, { offset: String(p.offset + p.limit), limit: String(p.limit) });
      if (p.offset > 0) prev = withParams(self, { offset: String(Math.max(0, p.offset - p.limit)), limit: String(p.limit) });
      body.pagination = { offset: p.offset, limit: p.limit, total: result.total };
      break;
    case 'page':
      if (hasMore) next = withParams(self, { page: String(p.page + 1), per_page: String(p.limit) });
      if (p.page > 1) prev = withParams(self, { page: String(p.page - 1), per_page: String(p.limit) });
      body.pagination = { page: p.page, per_page: p.limit, total: result.total };
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
  if (header.length) reply.header('link', header.join(', '));
  if (canCreate) links.push({ rel: 'create', href: self.split('?')[0]!, method: 'POST' });
  body.links = links;
  return body;
}
