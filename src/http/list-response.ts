// Renders a collection page: data, pagination, links and the RFC 8288 Link header.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CompiledResource } from '../model/compile.js';
import type { ApiVersion } from '../model/versions.js';
import { nextCursor, parseListParams, type QueryInput } from '../query/list-params.js';
import type { Ctx, ParentRef } from '../services/resource-service.js';
import type { HttpDeps } from './app.js';
import type { Link } from './render.js';
import { represent } from './render.js';

/** The request's path and query with `cursor` replaced, for next links. */
function withCursor(url: string, cursor: string): string {
  const [path, query = ''] = url.split('?', 2) as [string, string?];
  const params = new URLSearchParams(query);
  params.set('cursor', cursor);
  return `${path}?${params.toString()}`;
}

export async function renderList(
  deps: HttpDeps, version: ApiVersion, r: CompiledResource, request: FastifyRequest, reply: FastifyReply, ctx: Ctx, parent: ParentRef | undefined, canCreate: boolean,
): Promise<Record<string, unknown>> {
  const plan = parseListParams(r, request.query as QueryInput, deps.secret);
  // One extra row tells whether another page exists without counting the whole set.
  const { rows } = await deps.services.list(ctx, r.name, { where: plan.where, orderBy: plan.orderBy, limit: plan.limit + 1, ...(plan.after ? { after: plan.after } : {}) }, parent);
  const hasMore = rows.length > plan.limit;
  const page = hasMore ? rows.slice(0, plan.limit) : rows;
  const next = hasMore ? nextCursor(plan, page[page.length - 1]!.record, deps.secret) : null;
  const self = request.url;
  const links: Link[] = [{ rel: 'self', href: self, method: 'GET' }];
  if (next) {
    const href = withCursor(self, next);
    links.push({ rel: 'next', href, method: 'GET' });
    reply.header('link', `<${href}>; rel="next"`);
  }
  if (canCreate) links.push({ rel: 'create', href: self.split('?')[0]!, method: 'POST' });
  return {
    data: page.map((loaded) => represent(version, r, loaded, plan.fields)),
    pagination: { next_cursor: next, has_more: hasMore },
    links,
  };
}
