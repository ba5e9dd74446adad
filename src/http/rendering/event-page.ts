// Renders a page of the event feed (src/services/event-feed.ts) in the §6 cursor envelope: data in the request's version, pagination, links and the RFC 8288 Link header.
import type { FastifyReply } from 'fastify';
import { eventView } from '../../events/event-view.js';
import type { ApiVersion } from '../../model/versions.js';
import type { FeedPage, FeedRequest } from '../../services/event-feed.js';
import type { Link } from './render.js';

/**
 * The page's body at `self` (the URL as sent) of the list at `path`; the next page's link, in REST's parameter
 * names, goes in the body and in the Link header.
 */
export function renderEventPage(reply: FastifyReply, version: ApiVersion, at: { path: string; self: string }, request: FeedRequest, page: FeedPage): Record<string, unknown> {
  const { path, self } = at;
  const links: Link[] = [{ rel: 'self', href: self, method: 'GET' }];
  if (page.hasMore && page.nextCursor) {
    const next = `${path}?${new URLSearchParams({ ...(request.types ? { type: request.types.join(',') } : {}), limit: String(request.limit), cursor: page.nextCursor }).toString()}`;
    links.push({ rel: 'next', href: next, method: 'GET' });
    reply.header('link', `<${next}>; rel="next"`);
  }
  return {
    data: page.events.map((e) => eventView(e, version)),
    pagination: { next_cursor: page.nextCursor, has_more: page.hasMore },
    links,
  };
}
