// GET /events as a list (DESIGN §9): the events after a position, oldest first, in the §6 cursor shape, only those the caller may see.
import { createHash } from 'node:crypto';
import { AppError, type ErrorDetail } from '../errors/app-error.js';
import type { CompiledModel } from '../model/compile.js';
import type { Principal } from '../model/principal.js';
import { DEFAULT_LIMIT, MAX_LIMIT, parseCount } from '../query/pagination.js';
import { signToken, verifyToken } from '../query/tokens.js';
import type { EventFilter, Store, StoredEvent } from '../store/types.js';
import { eventFilterFor, eventMatcher, MAX_TYPE_PATTERNS, seesNothing, TYPE_PATTERN } from './event-visibility.js';

export type FeedQuery = Record<string, string | string[] | undefined>;

/** What a request to /events asks for, checked: where to start, how many, which types. */
export interface FeedRequest {
  /** An event id to start after (`after`, or the stream's Last-Event-ID). */
  afterId?: string;
  /** A sequence to start after, from a cursor. */
  afterSequence?: number;
  limit: number;
  types: string[] | undefined;
}

export interface FeedPage {
  events: StoredEvent[];
  nextCursor: string | null;
  hasMore: boolean;
}

const PARAMS = new Set(['after', 'cursor', 'limit', 'type']);

function single(details: ErrorDetail[], query: FeedQuery, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) {
    details.push({ field: name, message: 'is given more than once' });
    return undefined;
  }
  return v;
}

/** Cursors are bound to the type filter they were made with (another filter could skip events). */
function filterKey(types: readonly string[] | undefined): string {
  return createHash('sha256')
    .update((types ?? []).join(','))
    .digest('base64url')
    .slice(0, 12);
}

export class EventFeed {
  constructor(
    private readonly store: Store,
    private readonly model: CompiledModel,
    private readonly secret: string,
  ) {}

  /** Checks the query (400 INVALID_QUERY naming each bad parameter); `lastEventId` is the stream's header. */
  parse(query: FeedQuery, lastEventId?: string): FeedRequest {
    const details: ErrorDetail[] = [];
    for (const name of Object.keys(query)) if (!PARAMS.has(name)) details.push({ field: name, message: 'is not a parameter of /events (after, cursor, limit, type)' });
    const after = single(details, query, 'after');
    const cursor = single(details, query, 'cursor');
    const limit = parseCount(details, 'limit', single(details, query, 'limit'), DEFAULT_LIMIT, 1, MAX_LIMIT);
    const typeText = single(details, query, 'type');
    let types: string[] | undefined;
    if (typeText !== undefined) {
      types = typeText.split(',');
      if (types.length > MAX_TYPE_PATTERNS || types.some((t) => !TYPE_PATTERN.test(t))) {
        details.push({ field: 'type', message: `must be a comma list of at most ${MAX_TYPE_PATTERNS} event types, * matching any characters (order.*)`, value: typeText });
      }
    }
    if (after !== undefined && cursor !== undefined) details.push({ field: 'cursor', message: 'cannot be combined with after' });
    const request: FeedRequest = { limit, types };
    const start = lastEventId ?? after;
    if (start !== undefined) request.afterId = start;
    else if (cursor !== undefined) {
      const payload = verifyToken(cursor, this.secret) as { k?: unknown; s?: unknown; f?: unknown } | undefined;
      if (!payload || payload.k !== 'events' || typeof payload.s !== 'number' || !Number.isSafeInteger(payload.s) || payload.f !== filterKey(types)) {
        details.push({ field: 'cursor', message: 'is not a cursor of this event list (forged, or made with another type filter)' });
      } else request.afterSequence = payload.s;
    }
    if (details.length) throw new AppError('INVALID_QUERY', 'The query parameters of /events are not valid.', { details });
    return request;
  }

  /**
   * The sequence a request starts after: an event id's own (400 INVALID_PARAMETER when no kept event has
   * it: unknown, or purged), a cursor's, or `fallback` (the oldest kept event for a list, the head for a stream).
   * An event the caller may not see is answered exactly as an unknown one: otherwise its 200 would tell that
   * an id the caller guessed or was shown elsewhere exists (an existence oracle, issue 26.10).
   */
  async startOf(principal: Principal, request: FeedRequest, fallback: () => Promise<number>, field = 'after'): Promise<number> {
    if (request.afterId !== undefined) {
      const event = await this.store.findEvent(request.afterId);
      if (!event || !eventMatcher(eventFilterFor(this.model, principal, undefined))(event)) {
        throw new AppError('INVALID_PARAMETER', 'No kept event has this id: it is unknown, or older than the retention period.', {
          details: [{ field, message: 'is not the id of a kept event', value: request.afterId }],
        });
      }
      return event.sequence;
    }
    return request.afterSequence ?? fallback();
  }

  /**
   * What the principal may see of the log; 403 INSUFFICIENT_SCOPE when its scopes read no resource at all
   * (a key given only `metrics:read`): an empty feed or a stream that could never carry anything would only
   * hide the mistake, and a stream left so is closed (src/events/stream-guard.ts).
   */
  filterFor(principal: Principal, request: FeedRequest): EventFilter {
    const filter = eventFilterFor(this.model, principal, request.types);
    if (seesNothing(filter)) throw new AppError('INSUFFICIENT_SCOPE', 'This credential’s scopes let it read no resource, so no event is visible to it.');
    return filter;
  }

  /** One page of the list; `has_more` is known by reading one event more than the page. */
  async page(principal: Principal, request: FeedRequest): Promise<FeedPage> {
    const after = await this.startOf(principal, request, async () => 0);
    const rows = await this.store.listEvents(after, request.limit + 1, this.filterFor(principal, request));
    const hasMore = rows.length > request.limit;
    const events = hasMore ? rows.slice(0, request.limit) : rows;
    const last = events[events.length - 1];
    // With nothing more yet, the cursor still holds the position: polling with it returns only what comes next.
    const position = last ? last.sequence : after;
    return { events, hasMore, nextCursor: signToken({ k: 'events', s: position, f: filterKey(request.types) }, this.secret) };
  }
}
