// Decides each open stream's visibility again whenever credentials change: before any event is sent past a change, and every minute for expiries.
import type { EventStream } from './stream.js';
import { seesNothing } from '../services/event-visibility.js';

/** The streams a guard watches: the hub's. */
export interface GuardedStreams {
  all(): Iterable<EventStream>;
}

/**
 * A stream is authenticated at connect, but what it may carry follows the principal as it is now (DESIGN §9):
 * a key revoked or narrowed, a user demoted, a session ended. The store's credentials epoch moves in the same
 * transaction as any such change, in every process (src/store/types.ts), so a stream decided at the current
 * epoch is decided with every change up to it. `current()` is what the hub awaits between reading events from
 * the log and sending them: the epoch it reads then is at least that of every event read, so an event written
 * after a demotion is never judged by the principal as it was before. A full decision every `fullEveryMs`
 * catches what expires without a change (a session's idle or absolute end, a bearer token's `exp`).
 */
export class StreamGuard {
  private lastFull: number;
  /** Each stream's decision under way: decisions of one stream run one after another, so an older never lands last. */
  private readonly deciding = new WeakMap<EventStream, Promise<void>>();

  constructor(
    private readonly streams: GuardedStreams,
    private readonly epoch: () => number | Promise<number>,
    private readonly fullEveryMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.lastFull = now();
  }

  /** Brings every stream's visibility up to the store's current credentials epoch (and re-decides all once a period). */
  async current(): Promise<void> {
    // No stream, nothing to decide: the hub's tick reads no epoch then (a statement a second on an idle server, and
    // one more counted among a GraphQL query's own when a tick fell inside it: test/e2e/graphql/batching.test.ts).
    // Asked of the iterator, not by copying the streams: the hub awaits this before every batch it sends.
    if (this.streams.all()[Symbol.iterator]().next().done) return;
    const pending = this.epoch();
    const epoch = typeof pending === 'number' ? pending : await pending;
    const full = this.now() - this.lastFull >= this.fullEveryMs;
    if (full) this.lastFull = this.now();
    const stale: Promise<void>[] = [];
    for (const stream of this.streams.all()) if (full || stream.decidedAt !== epoch) stale.push(this.decide(stream, epoch, full));
    if (stale.length > 0) await Promise.all(stale);
  }

  /** The periodic check (the hub's poll tick). */
  readonly tick = (): Promise<void> => this.current();

  private decide(stream: EventStream, epoch: number, force: boolean): Promise<void> {
    const before = this.deciding.get(stream) ?? Promise.resolve();
    const next = before.then(async () => {
      if (stream.closed || (!force && stream.decidedAt !== undefined && stream.decidedAt >= epoch)) return;
      // The epoch was read before this authentication: the decision saw every change up to it.
      const filter = await stream.options.reauthorize().catch(() => null);
      if (filter === null || seesNothing(filter)) stream.close('revoked');
      else if (stream.decidedAt === undefined || epoch >= stream.decidedAt) stream.setFilter(filter, epoch);
    });
    this.deciding.set(stream, next);
    return next;
  }
}
