// Start-up writes tried again while the store is busy: processes starting at once on one SQLite file queue for its one write lock.
import { StoreBusy } from '../store/types.js';

/** How long a start keeps trying a write the store refused as busy (another process's migration, seed or writes). */
export const START_BUSY_BUDGET_MS = 60_000;

/**
 * `step`, tried again after a short, growing, jittered pause each time it fails with StoreBusy, until it succeeds
 * or `budgetMs` has passed (its last error is then thrown); any other error is thrown at once. Only for steps that
 * did nothing when refused as busy: a StoreBusy write never began (SQLite: no write lock; PostgreSQL: rolled back).
 * A request answers 503 after the store's own wait (5 s on SQLite); a start has nothing better to do than wait,
 * and giving up made one of four processes started at once on a loaded machine exit ("database is locked").
 */
export async function whileBusy<T>(step: () => Promise<T>, budgetMs = START_BUSY_BUDGET_MS): Promise<T> {
  const deadline = performance.now() + budgetMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (!(err instanceof StoreBusy) || performance.now() >= deadline) throw err;
      const pause = Math.min(1_000, 50 * attempt) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(pause, deadline - performance.now()))));
    }
  }
}
