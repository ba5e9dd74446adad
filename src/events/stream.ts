// One Server-Sent Events client (WHATWG HTML §9.2): its position in the log, its filter and version, and a bounded send buffer.
import type { ApiVersion } from '../model/versions.js';
import type { StoredEvent } from '../store/types.js';
import { eventView } from './event-view.js';

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
  matches: (event: StoredEvent) => boolean;
  /** The most bytes queued for this client before it is cut off (it resumes from its Last-Event-ID). */
  maxBufferBytes: number;
  /** Whether the credential the stream was opened with still holds (re-run when credentials change). */
  stillAuthorized: () => Promise<boolean>;
  onClose?: (reason: CloseReason) => void;
}

export class EventStream {
  /** The last sequence this stream has sent or passed over: nothing at or below it is sent again. */
  position = 0;
  /** False while it replays from the log; the hub sends it live events only once it has caught up. */
  live = false;
  closed = false;

  constructor(
    private readonly sink: StreamSink,
    readonly options: StreamOptions,
  ) {}

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
      if (!this.options.matches(event)) continue;
      this.sink.write(frameOf(event, this.options.version, cache));
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
    this.sink.end();
    // Ending lets a client that reads take what is queued and resume from its end. One that does not read (cut
    // off as slow, or revoked or shut down meanwhile) would hold its connection and that queue for as long as it
    // stays connected, and would hold the server's close: past the grace, its connection is closed.
    if (reason !== 'client') setTimeout(() => this.sink.destroy(), END_GRACE_MS).unref();
    this.options.onClose?.(reason);
  }
}
