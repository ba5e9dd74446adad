// Every password hash and check goes through one bounded queue per process: a flood delays password checks, never other requests.
import { AppError } from '../errors/app-error.js';
import { hashPassword, verifyPassword, type ScryptCost } from './passwords.js';

export interface PasswordWorkLimits {
  /** scrypt computations running at once; each holds a libuv pool thread and `128 · N · r` bytes. */
  concurrency: number;
  /** Computations allowed to wait for a slot; one more is refused with 503 and Retry-After. */
  maxQueue: number;
}

/**
 * Why a queue: scrypt runs on libuv's thread pool (4 threads by default), which file system and DNS work
 * share. Unbounded, 40 concurrent wrong passwords held every thread and 512 MiB for seconds and a login
 * behind them took 12 s. Bounded, at most `concurrency` threads and `concurrency × 128 MiB` (default cost)
 * are ever in use, waiting checks are served in arrival order, and past `maxQueue` the answer is an
 * immediate 503 instead of an ever longer wait.
 */
export class PasswordHasher {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Moving mean of one computation's duration (ms): what Retry-After is estimated from. */
  private meanMs = 0;
  private dummy: Promise<string> | undefined;
  /** For tests and metrics: the most computations ever running at once, and how many were refused. */
  readonly stats = { peak: 0, refused: 0 };

  constructor(
    private readonly cost: ScryptCost,
    private readonly limits: PasswordWorkLimits,
  ) {
    if (limits.concurrency < 1) throw new Error('password concurrency must be at least 1');
  }

  hash(password: string): Promise<string> {
    return this.run(() => hashPassword(password, this.cost));
  }

  verify(password: string, stored: string): Promise<boolean> {
    return this.run(() => verifyPassword(password, stored));
  }

  /**
   * A check for an account that does not exist costs what a real one costs (it runs against a hash made
   * once, with the same parameters), so the time taken does not tell whether the account exists.
   */
  async verifyUnknown(password: string): Promise<false> {
    this.dummy ??= hashPassword('not a real password', this.cost).catch((err: unknown) => {
      this.dummy = undefined;
      throw err;
    });
    await this.verify(password, await this.dummy);
    return false;
  }

  /** Computations waiting for a slot now. */
  get queued(): number {
    return this.waiting.length;
  }

  private async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.limits.concurrency) {
      this.running++;
    } else {
      if (this.waiting.length >= this.limits.maxQueue) {
        this.stats.refused++;
        const seconds = Math.max(1, Math.ceil(((this.waiting.length + this.running) * this.meanMs) / this.limits.concurrency / 1000));
        throw new AppError('SERVICE_UNAVAILABLE', 'Too many password checks are waiting; retry shortly.', { facts: { retryAfterSeconds: seconds } });
      }
      // The finishing computation hands its slot straight to the next in line: `running` stays as it is.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.stats.peak = Math.max(this.stats.peak, this.running);
    const started = performance.now();
    try {
      return await work();
    } finally {
      const ms = performance.now() - started;
      this.meanMs = this.meanMs === 0 ? ms : this.meanMs * 0.8 + ms * 0.2;
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
