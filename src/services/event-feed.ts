// The event feed as use cases, whatever the transport (DESIGN §9): pages of the log after a position and the start of a live stream, only the events the caller may see.
import { createHash } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import type { CompiledModel } from '../model/compile.js';
import type { Principal } from '../model/principal.js';
import { signToken, verifyToken } from '../query/tokens.js';
import type { EventFilter, Store, StoredEvent } from '../store/types.js';
import { eventFilterFor, eventMatcher, seesNothing } from './event-visibility.js';

/** What a feed reads of the store: the log and its head, nothing else. */
export type EventLog = Pick<Store, 'findEvent' | 'listEvents' | 'lastEventSequence' | 'sequenceEvents'>;

/** What a caller asks of the feed, parsed and checked by its transport (REST: src/http/routes/event-query.ts). */
export interface FeedRequest {
  /** An event id to start after (REST: `after`, or the stream's Last-Event-ID). */
  afterId?: string;
  /** A sequence to start after, from a cursor (`cursorPosition`). */
  afterSequence?: number;
  limit: number;
  /** Type patterns (`order.*`), checked with `validTypePatterns`; undefined for every type. */
  types: string[] | undefined;
}

export interface FeedPage {
  events: StoredEvent[];
  /** The position after the page, signed: the cursor of the next page (with nothing more yet, of what comes next). */
  nextCursor: string | null;
  hasMore: boolean;
}

/** Where a live stream starts, and what it may see: handed to the stream hub (src/events/hub.ts). */
export interface FeedStart {
  /** The sequence the stream starts after. */
  after: number;
  filter: EventFilter;
  /** Reads the log after a position with a stream's filter, for the hub's replay of what the stream missed. */
  replay: (after: number, limit: number, filter: EventFilter) => Promise<StoredEvent[]>;
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
    private readonly log: EventLog,
    private readonly model: CompiledModel,
    private readonly secret: string,
  ) {}

  /** The sequence a cursor of this feed holds; undefined for anything else (forged, or made with other `types`). */
  cursorPosition(cursor: string, types: readonly string[] | undefined): number | undefined {
    const payload = verifyToken(cursor, this.secret) as { k?: unknown; s?: unknown; f?: unknown } | undefined;
    if (!payload || payload.k !== 'events' || typeof payload.s !== 'number' || !Number.isSafeInteger(payload.s) || payload.f !== filterKey(types)) return undefined;
    return payload.s;
  }

  /**
   * The sequence a request starts after: an event id's own (400 INVALID_PARAMETER naming `field` when no kept
   * event has it: unknown, or purged), a cursor's, or `fallback` (the oldest kept event for a list, the head for
   * a stream). An event the caller may not see is answered exactly as an unknown one: otherwise its 200 would
   * tell that an id the caller guessed or was shown elsewhere exists (an existence oracle, issue 26.10).
   */
  private async startOf(principal: Principal, request: FeedRequest, fallback: () => Promise<number>, field: string): Promise<number> {
    if (request.afterId !== undefined) {
      const event = await this.log.findEvent(request.afterId);
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
  filterFor(principal: Principal, request: Pick<FeedRequest, 'types'>): EventFilter {
    const filter = eventFilterFor(this.model, principal, request.types);
    if (seesNothing(filter)) throw new AppError('INSUFFICIENT_SCOPE', 'This credential’s scopes let it read no resource, so no event is visible to it.');
    return filter;
  }

  /** One page of the list, from the oldest kept event by default; `has_more` is known by reading one event more than the page. */
  async page(principal: Principal, request: FeedRequest): Promise<FeedPage> {
    // Read-your-writes (DESIGN §9): an event whose write was acknowledged before this request is on the page, and
    // its id is a valid `after`. PostgreSQL numbers events after their commit, off the writer's request path, so
    // the committed ones still unnumbered are numbered first (one round trip when there are none).
    await this.log.sequenceEvents();
    const after = await this.startOf(principal, request, async () => 0, 'after');
    const rows = await this.log.listEvents(after, request.limit + 1, this.filterFor(principal, request));
    const hasMore = rows.length > request.limit;
    const events = hasMore ? rows.slice(0, request.limit) : rows;
    const last = events[events.length - 1];
    // With nothing more yet, the cursor still holds the position: polling with it returns only what comes next.
    const position = last ? last.sequence : after;
    return { events, hasMore, nextCursor: signToken({ k: 'events', s: position, f: filterKey(request.types) }, this.secret) };
  }

  /**
   * The start of a live stream: after the event the request names (`field` names its parameter in a refusal:
   * REST's `after` or `Last-Event-ID`), else at the head of the log, so only new events follow.
   */
  async startStream(principal: Principal, request: FeedRequest, field: string): Promise<FeedStart> {
    // As for a page: an acknowledged write's event id is a valid place to resume after (the head numbers them itself).
    if (request.afterId !== undefined) await this.log.sequenceEvents();
    const after = await this.startOf(principal, request, () => this.log.lastEventSequence(), field);
    return { after, filter: this.filterFor(principal, request), replay: (from, limit, filter) => this.log.listEvents(from, limit, filter) };
  }
}
