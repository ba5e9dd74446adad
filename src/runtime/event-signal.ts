// Wake-ups for everything that follows the event log in this process (streams, webhook dispatch): a commit here, the fan-out, PostgreSQL NOTIFY.
import { randomUUID } from 'node:crypto';
import type { FanOut, Unsubscribe } from '../fanout/types.js';
import type { Store } from '../store/types.js';

/** The fan-out channel on which processes say "events were committed". */
export const EVENTS_CHANNEL = 'events';

/**
 * A hint, never the data: followers read the log themselves from their own position, so a lost or
 * duplicated wake-up costs at most a poll interval of latency and never an event. Sources: commits in
 * this process (at once), commits in other processes (Redis fan-out when configured; PostgreSQL
 * NOTIFY when the sequencer stamps), and each follower's own poll timer.
 */
export class EventSignal {
  private readonly listeners = new Set<() => void>();
  /** Listeners of this process's own commits only (the embedded worker's pacer counts them as request load). */
  private readonly local = new Set<() => void>();
  private unsubscribe: Unsubscribe | undefined;
  private unwatch: (() => void) | undefined;
  private closed = false;
  /** Names this process's messages on the channel. */
  private readonly origin = randomUUID();

  constructor(
    private readonly fanout: FanOut,
    private readonly store: Store,
  ) {}

  /**
   * Not awaited on the fan-out: with Redis unreachable at start the process still serves (its followers poll),
   * and the subscription starts whenever Redis answers.
   */
  start(onError: (err: unknown) => void): void {
    this.fanout
      // A process hears its own publications too (Redis echoes them, the in-memory fan-out is this process):
      // its commits woke its followers already, so a message naming this process is passed over.
      .subscribe(EVENTS_CHANNEL, (origin) => {
        if (origin !== this.origin) this.wake();
      })
      .then((unsubscribe) => {
        if (this.closed) void unsubscribe();
        else this.unsubscribe = unsubscribe;
      })
      .catch(onError);
    this.unwatch = this.store.watchEvents(() => this.wake());
  }

  on(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onCommitted(listener: () => void): () => void {
    this.local.add(listener);
    return () => this.local.delete(listener);
  }

  private wake(): void {
    for (const listener of this.listeners) listener();
  }

  /**
   * A transaction of this process committed events: wake followers here and in every other process. Not
   * when the store announces events itself once they are readable (PostgreSQL: after the stamper numbered
   * them); a wake-up now would only make every process read too early.
   */
  committed(): void {
    for (const listener of this.local) listener();
    if (this.store.capabilities.announcesEvents) return;
    this.wake();
    this.fanout.publish(EVENTS_CHANNEL, this.origin).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unwatch?.();
    await this.unsubscribe?.();
  }
}
