// One Server-Sent Events client (WHATWG HTML §9.2): its position in the log, its filter and version, and a bounded send buffer.
import type { ApiVersion } from '../model/versions.js';
import type { EventFilter, StoredEvent } from '../store/types.js';
import { eventView } from './event-view.js';
import { eventMatcher } from '../services/event-visibility.js';

/** Where a stream's bytes go: the HTTP layer's response, kept abstract so the hub never sees Fastify. */
export interface StreamSink {
  /** Queues bytes; false once the socket's own buffer is full (Node's writable backpressure). */
  write(chunk: string): boolean;
  /** Bytes queued and not yet taken by the socket. */
  buffered(): number;
  /** Ends the response (the client may reconnect with Last-Event-ID). */
  end(): void;
  /** Closes the connection at once, dropping what is still queued for it (a no-op once the response is done). */
  destroy(): void;
}

/** How long a stream the server ended may take to receive what was queued for it before its connection is closed. */
export const END_GRACE_MS = 5_000;

/** A frame per (event, version), rendered once and shared by every stream of that version. */
export type FrameCache = Map<StoredEvent, Map<string, string>>;

export function frameOf(event: StoredEvent, version: ApiVersion, cache?: FrameCache): string {
  let byVersion = cache?.get(event);
  const cached = byVersion?.get(version.name);
  if (cached !== undefined) return cached;
  // JSON.stringify never emits a raw newline, so `data:` is one line (a newline would end the field).
  const frame = `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(eventView(event, version))}\n\n`;
  if (cache) {
    if (!byVersion) cache.set(event, (byVersion = new Map()));
    byVersion.set(version.name, frame);
  }
  return frame;
}

export type CloseReason = 'client' | 'slow' | 'revoked' | 'shutdown' | 'error';

export interface StreamOptions {
  version: ApiVersion;
  /** What the principal could see when it connected (its role, scopes and user, and the `type` patterns asked for). */
  filter: EventFilter;
  /** The most bytes queued for this client before it is cut off (it resumes from its Last-Event-ID). */
  maxBufferBytes: number;
  /**
   * What the principal may see now: its credential as presented, authenticated again, turned into a filter
   * (DESIGN §9: visibility is decided per event at send time with the principal as it is now); null when the
   * credential no longer authenticates. Run whenever credentials change (src/events/stream-guard.ts).
   */
  reauthorize: () => Promise<EventFilter | null>;
  onClose?: (reason: CloseReason) => void;
  /**
   * The frame of an event, when not the REST stream's (`frameOf`): a GraphQL subscription's `next` message
   * (src/graphql/subscriptions.ts). Synchronous, so an event is framed in the step that decides to send it.
   */
  render?: (event: StoredEvent) => string;
  /** Only these events besides the filter (a subscription to one object's events); kept when visibility is decided anew. */
  only?: (event: StoredEvent) => boolean;
  /**
   * What is sent last when the server ends the stream, before the end (a GraphQL subscription's error and
   * `complete` when its credential was revoked, so its client stops instead of reconnecting); nothing by default.
   */
  farewell?: (reason: CloseReason) => string | undefined;
}

export class EventStream {
  /** The last sequence this stream has sent or passed over: nothing at or below it is sent again. */
  position = 0;
  /** False while it replays from the log; the hub sends it live events only once it has caught up. */
  live = false;
  closed = false;
  /**
   * The credentials epoch its visibility was last decided at (read before the decision, so the decision saw
   * every change up to it); undefined until the first decision after connecting. The guard decides again
   * whenever the store's epoch differs.
   */
  decidedAt: number | undefined;
  private current: EventFilter;
  private matches: (event: StoredEvent) => boolean;

  constructor(
    private readonly sink: StreamSink,
    readonly options: StreamOptions,
  ) {
    this.current = options.filter;
    this.matches = eventMatcher(options.filter);
  }

  /** What the stream may carry now: its replay reads the log with it, live events are matched against it. */
  get filter(): EventFilter {
    return this.current;
  }

  /** Visibility decided anew (src/events/stream-guard.ts); every event sent from now on is judged by it. */
  setFilter(filter: EventFilter, epoch: number): void {
    this.current = filter;
    this.matches = eventMatcher(filter);
    this.decidedAt = epoch;
  }

  /**
   * Sends the events above the position that pass the filter, in order. A client that lets more than
   * `maxBufferBytes` pile up is cut off rather than held in memory: the last frame it received whole is
   * its Last-Event-ID, so reconnecting loses nothing.
   */
  send(events: readonly StoredEvent[], cache?: FrameCache): void {
    for (const event of events) {
      if (this.closed) return;
      if (event.sequence <= this.position) continue;
      this.position = event.sequence;
      if (!this.matches(event) || (this.options.only && !this.options.only(event))) continue;
      this.sink.write(this.options.render ? this.options.render(event) : frameOf(event, this.options.version, cache));
      if (this.sink.buffered() > this.options.maxBufferBytes) {
        this.close('slow');
        return;
      }
    }
  }

  /** A comment line (`: …`): keeps proxies from closing an idle connection; clients ignore it. */
  comment(text: string): void {
    if (this.closed) return;
    this.sink.write(`: ${text}\n\n`);
    if (this.sink.buffered() > this.options.maxBufferBytes) this.close('slow');
  }

  /** A field line as sent before any event (`retry: 3000`). */
  field(text: string): void {
    if (!this.closed) this.sink.write(`${text}\n\n`);
  }

  close(reason: CloseReason): void {
    if (this.closed) return;
    this.closed = true;
    const last = reason === 'client' ? undefined : this.options.farewell?.(reason);
    if (last !== undefined) this.sink.write(last);
    this.sink.end();
    // Ending lets a client that reads take what is queued and resume from its end. One that does not read (cut
    // off as slow, or revoked or shut down meanwhile) would hold its connection and that queue for as long as it
    // stays connected, and would hold the server's close: past the grace, its connection is closed.
    if (reason !== 'client') setTimeout(() => this.sink.destroy(), END_GRACE_MS).unref();
    this.options.onClose?.(reason);
  }
}
