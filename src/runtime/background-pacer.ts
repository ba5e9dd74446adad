// Gives the request path of `canon serve` first claim on its event loop: while writes saturate it, the embedded worker's rounds wait.
import { performance } from 'node:perf_hooks';

export interface PacerOptions {
  /** Event-loop utilisation at or above which the loop counts as saturated (0–1). */
  busyAbove: number;
  /** How often utilisation is sampled, in ms. */
  sampleMs: number;
  /** While saturated, at most one round starts per this many ms: the backlog always moves, however busy the API. */
  floorMs: number;
}

export const DEFAULT_PACER: PacerOptions = { busyAbove: 0.9, sampleMs: 100, floorMs: 2000 };

/**
 * A delivery costs the process about half what the write that caused it did (an HTTPS request, a signature,
 * a recording transaction), so an embedded worker keeping up with a write load that saturates the core takes
 * a third of it from the requests. The pacer makes deliveries background work instead: a sample counts as
 * saturated when the loop was at least `busyAbove` utilised *and* requests of this process committed writes
 * in it (`noteWrite`) — the worker's own rounds write no events, so a backlog drained on an idle API is never
 * slowed. While saturated, rounds start at most once per `floorMs` (100 deliveries every 2 s by default), so
 * deliveries lag but never stall; when the load drops they catch up at full speed. `canon worker` processes
 * are not paced: they have their own core.
 */
export class BackgroundPacer {
  private writes = 0;
  private saturated = false;
  private nextSlot = 0;
  /** Rounds held until their slot; released at once when a window is no longer saturated. */
  private readonly waiting = new Set<() => void>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly options: PacerOptions = DEFAULT_PACER,
    private readonly now: () => number = Date.now,
    private readonly utilization: () => number = loopUtilization(),
  ) {
    this.timer = setInterval(() => this.sample(), options.sampleMs);
    this.timer.unref();
  }

  /** A request of this process committed a write (an event): evidence that the load is the API's. */
  noteWrite(): void {
    this.writes++;
  }

  get busy(): boolean {
    return this.saturated;
  }

  /** Resolves when a round may start: at once unless saturated, else at the next free slot (earlier if the load drops). */
  async wait(): Promise<void> {
    if (!this.saturated) return;
    const slot = Math.max(this.now(), this.nextSlot);
    this.nextSlot = slot + this.options.floorMs;
    const delay = slot - this.now();
    if (delay <= 0) return;
    await new Promise<void>((resolve) => {
      const release = (): void => {
        clearTimeout(timer);
        this.waiting.delete(release);
        resolve();
      };
      const timer = setTimeout(release, delay);
      this.waiting.add(release);
    });
  }

  /** Closes a sampling window (the timer calls it every `sampleMs`). */
  sample(): void {
    this.saturated = this.utilization() >= this.options.busyAbove && this.writes > 0;
    this.writes = 0;
    if (this.saturated) return;
    this.nextSlot = 0;
    for (const release of [...this.waiting]) release();
  }

  /** Stops sampling and releases every held round (the worker is stopping: it must not wait out a slot). */
  stop(): void {
    clearInterval(this.timer);
    for (const release of [...this.waiting]) release();
  }
}

/** The event loop's utilisation since the previous call (perf_hooks, Node's own measure of time not spent idle). */
function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const current = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(current, last);
    last = current;
    return utilization;
  };
}
