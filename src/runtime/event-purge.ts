// The event retention timer of worker processes (DESIGN §9: events are kept 30 days), hourly, a batch at a time.
import type { Core } from './core.js';

const EVERY_MS = 3600_000;
const BATCH = 5_000;
const MAX_BATCHES = 1_000;

/**
 * Deletes events older than CANON_EVENT_RETENTION_DAYS, in batches so no transaction holds the log long.
 * A reader positioned on a purged event gets 400 INVALID_PARAMETER and starts again from the oldest kept.
 * First run after a random part of the hour, so workers started together do not purge together.
 */
export function scheduleEventPurge(core: Core): () => void {
  const { store, config, clock, log } = core;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const run = async (): Promise<void> => {
    const before = new Date(clock().getTime() - config.eventRetentionDays * 86_400_000).toISOString();
    let total = 0;
    for (let i = 0; i < MAX_BATCHES && !stopped; i++) {
      const n = await store.purgeEvents(before, BATCH);
      total += n;
      if (n < BATCH) break;
    }
    if (total > 0) log.info({ purged: total, before }, 'events past retention purged');
  };
  const next = (delayMs: number): void => {
    timer = setTimeout(() => {
      run()
        .catch((err: unknown) => log.warn({ err }, 'purging old events failed'))
        .finally(() => {
          if (!stopped) next(EVERY_MS);
        });
    }, delayMs);
    timer.unref();
  };
  next(Math.floor(Math.random() * EVERY_MS));
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
