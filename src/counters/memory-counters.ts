// In-process counters: exact within one process (the event loop serialises them); state expires with its window.
import type { Consumption, Counters, ImmediateCounters, SlidingWindow, TokenBucket } from './types.js';

interface Bucket {
  tokens: number;
  at: number;
  expires: number;
}

interface Log {
  times: number[];
  expires: number;
}

/** Sweeps expired entries at most this often, so idle keys do not accumulate. */
const SWEEP_MS = 60_000;

export class MemoryCounters implements Counters {
  private readonly buckets = new Map<string, Bucket>();
  private readonly logs = new Map<string, Log>();
  private lastSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_MS) return;
    this.lastSweep = now;
    for (const [k, b] of this.buckets) if (b.expires <= now) this.buckets.delete(k);
    for (const [k, l] of this.logs) if (l.expires <= now) this.logs.delete(k);
  }

  readonly immediate: ImmediateCounters = {
    now: () => this.now(),
    tokenBucket: (key, bucket, cost, at) => this.tokenBucketAt(key, bucket, cost, at),
    slidingWindow: (key, window, cost, at) => this.slidingWindowAt(key, window, cost, at),
  };

  async tokenBucket(key: string, bucket: TokenBucket, cost = 1): Promise<Consumption> {
    return this.tokenBucketAt(key, bucket, cost, this.now());
  }

  async slidingWindow(key: string, window: SlidingWindow, cost = 1): Promise<Consumption> {
    return this.slidingWindowAt(key, window, cost, this.now());
  }

  private tokenBucketAt(key: string, { capacity, periodSeconds }: TokenBucket, cost: number, now: number): Consumption {
    this.sweep(now);
    const ratePerMs = capacity / (periodSeconds * 1000);
    let b = this.buckets.get(key);
    if (b === undefined) {
      b = { tokens: capacity, at: now, expires: 0 };
      this.buckets.set(key, b);
    }
    const tokens = Math.min(capacity, b.tokens + (now - b.at) * ratePerMs);
    const allowed = tokens >= cost;
    const left = allowed ? tokens - cost : tokens;
    const fullInMs = (capacity - left) / ratePerMs;
    // Updated in place: this runs on every request, and a new object per call is garbage per call.
    b.tokens = left;
    b.at = now;
    b.expires = now + fullInMs;
    return {
      allowed,
      limit: capacity,
      remaining: Math.floor(left),
      resetAt: Math.ceil((now + fullInMs) / 1000),
      retryAfter: allowed ? 0 : Math.ceil((cost - left) / ratePerMs / 1000),
    };
  }

  private slidingWindowAt(key: string, { limit, windowSeconds }: SlidingWindow, cost: number, now: number): Consumption {
    this.sweep(now);
    const windowMs = windowSeconds * 1000;
    const log = this.logs.get(key) ?? { times: [], expires: 0 };
    log.times = log.times.filter((t) => t > now - windowMs);
    const allowed = log.times.length + cost <= limit;
    if (allowed) for (let i = 0; i < cost; i++) log.times.push(now);
    log.expires = now + windowMs;
    this.logs.set(key, log);
    const oldest = log.times[0] ?? now;
    // A refused request can pass once enough of the oldest entries have left the window.
    const freeAt = log.times[Math.max(0, log.times.length + cost - limit - 1)] ?? now;
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - log.times.length),
      resetAt: Math.ceil((oldest + windowMs) / 1000),
      retryAfter: allowed ? 0 : Math.max(1, Math.ceil((freeAt + windowMs - now) / 1000)),
    };
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.buckets.clear();
    this.logs.clear();
  }
}
