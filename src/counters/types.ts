// The counters contract the rate limiter builds on: token buckets and sliding windows, exact under concurrency.

/** `capacity` tokens, refilled continuously at `capacity / periodSeconds` per second (`600/60`). */
export interface TokenBucket {
  capacity: number;
  periodSeconds: number;
}

/** At most `limit` consumptions in any `windowSeconds`-long window (a sliding log, not an approximation). */
export interface SlidingWindow {
  limit: number;
  windowSeconds: number;
}

export interface Consumption {
  allowed: boolean;
  limit: number;
  /** What is left after this consumption (0 when refused). */
  remaining: number;
  /** Unix seconds when the counter is whole again (bucket full, or window empty). */
  resetAt: number;
  /** Seconds until a refused consumption could succeed (the next token); 0 when allowed. */
  retryAfter: number;
}

/**
 * Counters that can answer without waiting (in-process ones): the rate limiter then adds no await to a
 * request. `at` is the time (ms) from `now()`, read once for the two limits a request takes: the clock
 * read is a third of what taking a token costs.
 */
export interface ImmediateCounters {
  now(): number;
  tokenBucket(key: string, bucket: TokenBucket, cost: number, at: number): Consumption;
  slidingWindow(key: string, window: SlidingWindow, cost: number, at: number): Consumption;
}

export interface Counters {
  /** Present when answers need no I/O (a declared capability, so callers never test for a backend). */
  readonly immediate?: ImmediateCounters;
  tokenBucket(key: string, bucket: TokenBucket, cost?: number): Promise<Consumption>;
  slidingWindow(key: string, window: SlidingWindow, cost?: number): Promise<Consumption>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
