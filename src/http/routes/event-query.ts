// The query of GET /events in REST's names (DESIGN §9: after, cursor, limit, type) parsed into the feed's request (src/services/event-feed.ts).
import { AppError, type ErrorDetail } from '../../errors/app-error.js';
import { DEFAULT_LIMIT, MAX_LIMIT, parseCount } from '../../query/pagination.js';
import type { EventFeed, FeedRequest } from '../../services/event-feed.js';
import { MAX_TYPE_PATTERNS, validTypePatterns } from '../../services/event-visibility.js';

export type FeedQuery = Record<string, string | string[] | undefined>;

const PARAMS = new Set(['after', 'cursor', 'limit', 'type']);

function single(details: ErrorDetail[], query: FeedQuery, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) {
    details.push({ field: name, message: 'is given more than once' });
    return undefined;
  }
  return v;
}

/** Checks the query (400 INVALID_QUERY naming each bad parameter); `lastEventId` is the stream's header, which takes the place of `after`. */
export function feedRequestOf(feed: EventFeed, query: FeedQuery, lastEventId?: string): FeedRequest {
  const details: ErrorDetail[] = [];
  for (const name of Object.keys(query)) if (!PARAMS.has(name)) details.push({ field: name, message: 'is not a parameter of /events (after, cursor, limit, type)' });
  const after = single(details, query, 'after');
  const cursor = single(details, query, 'cursor');
  const limit = parseCount(details, 'limit', single(details, query, 'limit'), DEFAULT_LIMIT, 1, MAX_LIMIT);
  const typeText = single(details, query, 'type');
  let types: string[] | undefined;
  if (typeText !== undefined) {
    types = typeText.split(',');
    if (!validTypePatterns(types)) {
      details.push({ field: 'type', message: `must be a comma list of at most ${MAX_TYPE_PATTERNS} event types, * matching any characters (order.*)`, value: typeText });
    }
  }
  if (after !== undefined && cursor !== undefined) details.push({ field: 'cursor', message: 'cannot be combined with after' });
  const request: FeedRequest = { limit, types };
  const start = lastEventId ?? after;
  if (start !== undefined) request.afterId = start;
  else if (cursor !== undefined) {
    const position = feed.cursorPosition(cursor, types);
    if (position === undefined) details.push({ field: 'cursor', message: 'is not a cursor of this event list (forged, or made with another type filter)' });
    else request.afterSequence = position;
  }
  if (details.length) throw new AppError('INVALID_QUERY', 'The query parameters of /events are not valid.', { details });
  return request;
}
