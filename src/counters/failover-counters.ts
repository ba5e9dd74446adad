// Fails open when Redis is unreachable: counts per process instead, logs the switch, and tries Redis again shortly after.
import type { Consumption, Counters, SlidingWindow, TokenBucket } from './types.js';

/** How long to stay on the fallback before trying the primary again. */
const RETRY_MS = 5_000;

export class FailoverCounters implements Counters {
  private downSince: number | undefined;

  constructor(
    private readonly primary: Counters,
    private readonly fallback: Counters,
    private readonly log: (message: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** True while limits are enforced per process because the shared counters are unreachable. */
  get degraded(): boolean {
    return this.downSince !== undefined;
  }

  private async run(fn: (c: Counters) => Promise<Consumption>): Promise<Consumption> {
    if (this.downSince !== undefined && this.now() - this.downSince < RETRY_MS) return fn(this.fallback);
    try {
      const result = await fn(this.primary);
      if (this.downSince !== undefined) this.log('shared rate-limit counters are reachable again; limits are shared across processes');
      this.downSince = undefined;
      return result;
    } catch {
      if (this.downSince === undefined) this.log('shared rate-limit counters are unreachable; failing open to per-process limits');
      this.downSince = this.now();
      return fn(this.fallback);
    }
  }

  tokenBucket(key: string, bucket: TokenBucket, cost?: number): Promise<Consumption> {
    return this.run((c) => c.tokenBucket(key, bucket, cost));
  }

  slidingWindow(key: string, window: SlidingWindow, cost?: number): Promise<Consumption> {
    return this.run((c) => c.slidingWindow(key, window, cost));
  }

  async ping(): Promise<boolean> {
    return this.primary.ping();
  }

  async close(): Promise<void> {
    await Promise.all([this.primary.close(), this.fallback.close()]);
  }
}
