// When a PostgreSQL transaction is run again: which failures, how many times, and how long to wait between tries.

/** SQLSTATEs for which running the whole transaction again is correct: serialization failure and deadlock. */
const RETRYABLE = new Set(['40001', '40P01']);

/**
 * Tries in all. Under READ COMMITTED with explicit row locks (see PgStore.transaction) the usual workload
 * needs none; what remains is deadlocks between unrelated lock orders, which a second try resolves.
 */
export const MAX_ATTEMPTS = 6;
const BASE_MS = 5;
const CAP_MS = 250;

export function retryable(err: unknown): boolean {
  return RETRYABLE.has((err as { code?: string } | undefined)?.code ?? '');
}

/**
 * "Full jitter": a uniformly random wait below an exponentially growing ceiling, so that transactions that
 * collided once do not collide again in step (5, 10, 20, 40, 80 ms ceilings, capped at 250 ms).
 */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return random() * Math.min(CAP_MS, BASE_MS * 2 ** (attempt - 1));
}
