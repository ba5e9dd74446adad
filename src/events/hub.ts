// The process's event hub: tails the log once for every stream it holds, keeps recent events in a ring, joins replays to the live tail.
import type { EventFilter, Store, StoredEvent } from '../store/types.js';
import type { EventStream, FrameCache } from './stream.js';

export interface HubOptions {
  /** How often the log is read without any wake-up (another process's events with no Redis, lost notifications). */
  pollMs: number;
  /** Comment lines on every stream, so intermediaries keep idle connections open (DESIGN §9: 15 s). */
  heartbeatMs: number;
  /** Recent events kept in memory: a stream whose position is within them joins without reading the log. */
  ringSize: number;
  /** Events read from the log per query. */
  batch: number;
  onError?: (err: unknown) => void;
}

interface Entry {
  event: StoredEvent;
}

const REPLAY_ROUNDS = 100_000;

/**
 * The log is the truth; notifications only say "read now". Whatever wakes it (a commit in this process,
 * the fan-out from another, PostgreSQL NOTIFY, the poll timer), the hub reads the events above its head once
 * and hands them to every live stream, rendering each frame once per version. A stream that starts behind
 * the head replays from the log with its own filter, then joins: when its position reaches the ring, the
 * rest is copied from the ring and the stream turns live in the same synchronous step, so no live batch
 * can fall between the replay and the tail (nothing lost), and positions skip what was sent (nothing doubled).
 */
export class EventHub {
  /** The highest sequence read from the log. */
  private head = 0;
  /** Events (floor, head], oldest first. */
  private ring: Entry[] = [];
  private floor = 0;
  private readonly streams = new Set<EventStream>();
  private reading: Promise<void> | undefined;
  private again = false;
  private started: Promise<void> | undefined;
  private timers: NodeJS.Timeout[] = [];
  private closed = false;
  /**
   * Set when a wake found no stream to read for and skipped the read (a process with no streams reads nothing
   * per commit): the head may be behind the log, and the next read starts again from the log's head, as at start.
   */
  private stale = false;
  /** Called on every poll tick; the composition root checks credentials and sweeps there. */
  private readonly tickers: Array<() => Promise<void>> = [];
  /** Awaited between reading events and sending them: brings every stream's visibility up to date (src/events/stream-guard.ts). */
  private gate: () => Promise<void> = async () => {};

  constructor(
    private readonly store: Store,
    private readonly options: HubOptions,
  ) {}

  get size(): number {
    return this.streams.size;
  }

  /** Starts from the log's current head and begins polling and heartbeats. */
  start(): Promise<void> {
    this.started ??= (async () => {
      this.head = this.floor = await this.store.lastEventSequence();
      const poll = setInterval(() => void this.tick(), this.options.pollMs);
      const beat = setInterval(() => this.heartbeat(), this.options.heartbeatMs);
      poll.unref();
      beat.unref();
      this.timers.push(poll, beat);
    })();
    return this.started;
  }

  /**
   * Sets what runs after events are read from the log and before any stream is sent them (or a replay page is
   * read): the stream guard, so each event is judged by the principal as it is at send time (DESIGN §9).
   */
  guardWith(gate: () => Promise<void>): void {
    this.gate = gate;
  }

  /** Runs `fn` on every poll tick (sweeps, credential checks); errors go to onError. */
  onTick(fn: () => Promise<void>): void {
    this.tickers.push(fn);
  }

  private async tick(): Promise<void> {
    for (const fn of this.tickers) await fn().catch((err) => this.options.onError?.(err));
    this.wake();
  }

  private heartbeat(): void {
    for (const s of this.streams) s.comment('heartbeat');
  }

  /** Reads the log now (coalesced: a wake during a read makes one more read after it); with no stream, marks the hub stale instead. */
  wake(): void {
    if (this.closed) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    if (this.streams.size === 0) {
      this.stale = true;
      return;
    }
    this.reading = this.readAll()
      .catch((err) => this.options.onError?.(err))
      .finally(() => {
        this.reading = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves once the reads under way (and one after them) are done: for tests and shutdown. */
  async settled(): Promise<void> {
    while (this.reading) await this.reading;
  }

  private async readAll(): Promise<void> {
    await this.start();
    if (this.stale) {
      // No stream was held while reads were skipped, so none waits for the events skipped: start from the head.
      const head = await this.store.lastEventSequence();
      this.head = this.floor = head;
      this.ring = [];
      this.stale = false;
    }
    for (let round = 0; round < REPLAY_ROUNDS && !this.closed; round++) {
      const events = await this.store.listEvents(this.head, this.options.batch);
      if (events.length === 0) return;
      // Read after the events: every credential change committed before them is seen by the streams' filters.
      await this.gate();
      this.append(events);
      const cache: FrameCache = new Map();
      for (const s of this.streams) if (s.live) s.send(events, cache);
      if (events.length < this.options.batch) return;
    }
  }

  private append(events: readonly StoredEvent[]): void {
    for (const event of events) this.ring.push({ event });
    this.head = events[events.length - 1]!.sequence;
    const excess = this.ring.length - this.options.ringSize;
    if (excess > 0) {
      this.floor = this.ring[excess - 1]!.event.sequence;
      this.ring = this.ring.slice(excess);
    }
  }

  /**
   * Attaches a stream positioned after `after`: replays what it missed from the log (its own filter in SQL),
   * then joins the live tail. Resolves once live, or when the stream closed meanwhile.
   */
  async attach(stream: EventStream, after: number, filterPage: (after: number, limit: number, filter: EventFilter) => Promise<StoredEvent[]>): Promise<void> {
    await this.start();
    stream.position = after;
    this.streams.add(stream);
    if (this.stale) {
      // Reads were skipped while no stream was held: one read (from the log's head) before the stream compares its
      // position with the ring; it then replays from the log what lies below, and the hub reads what lies above.
      if (!this.reading) this.wake();
      await this.reading;
      if (this.stale) {
        this.streams.delete(stream);
        throw new Error('the event hub could not read the head of the log');
      }
    }
    for (let round = 0; round < REPLAY_ROUNDS; round++) {
      // The stream's visibility as it is now, before anything is sent to it (its first decision after connecting too).
      await this.gate();
      if (stream.closed || this.closed) {
        this.streams.delete(stream);
        // A stream that arrives while the hub closes was not among those close() ended: end it here, or its
        // response would stay open (holding the server's close) with nothing ever sent on it.
        stream.close('shutdown');
        return;
      }
      if (stream.position >= this.floor) {
        // Synchronous from here to `live = true`: no batch of the hub can come in between.
        stream.send(this.ring.filter((e) => e.event.sequence > stream.position).map((e) => e.event));
        stream.live = true;
        return;
      }
      // The head read before the page: every event up to it was committed before the page was read, so
      // a short page means none of them is missing and the stream may move to that head.
      const head = await this.store.lastEventSequence();
      const page = await filterPage(stream.position, this.options.batch, stream.filter);
      // A change committed while the page was read is judged before the page is sent.
      await this.gate();
      if (stream.closed) continue;
      stream.send(page);
      if (page.length < this.options.batch) stream.position = Math.max(stream.position, head);
    }
    stream.close('slow');
    this.streams.delete(stream);
  }

  detach(stream: EventStream): void {
    this.streams.delete(stream);
  }

  /** Every stream, for credential checks. */
  all(): Iterable<EventStream> {
    return this.streams;
  }

  /** Ends every stream (clients reconnect elsewhere with Last-Event-ID) and stops reading. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    for (const s of this.streams) s.close('shutdown');
    this.streams.clear();
    await this.reading;
  }
}
