// The event retention timer of worker processes (DESIGN §9: events are kept 30 days), hourly, a batch at a time.
import { stillOwed } from '../webhooks/dispatch-positions.js';
import type { Core } from './core.js';

const EVERY_MS = 3600_000;
const BATCH = 5_000;
const MAX_BATCHES = 1_000;

/**
 * Deletes events older than CANON_EVENT_RETENTION_DAYS, in batches so no transaction holds the log long; returns
 * how many went. A reader positioned on a purged event gets 400 INVALID_PARAMETER and starts again from the
 * oldest kept. Events still owed to a webhook endpoint are kept past it, however long workers were held back or
 * absent (DESIGN §9): those not yet dispatched to every enabled endpoint, and from the event of the oldest
 * pending delivery on.
 */
export async function purgeExpiredEvents(core: Pick<Core, 'store' | 'config' | 'clock' | 'log'>, stopped: () => boolean = () => false): Promise<number> {
  const { store, config, clock, log } = core;
  const retention = new Date(clock().getTime() - config.eventRetentionDays * 86_400_000).toISOString();
  const owed = await stillOwed(store);
  const before = owed.before !== undefined && owed.before < retention ? owed.before : retention;
  let total = 0;
  for (let i = 0; i < MAX_BATCHES && !stopped(); i++) {
    const n = await store.purgeEvents(before, BATCH, owed.through);
    total += n;
    if (n < BATCH) break;
  }
  if (total > 0) log.info({ purged: total, before, through: owed.through }, 'events past retention purged');
  return total;
}

/**
 * Purges hourly, first after a random part of the hour, so workers started together do not purge together.
 * Stopping waits for a purge under way, so the store is never closed beneath it.
 */
export function scheduleEventPurge(core: Core): () => Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const next = (delayMs: number): void => {
    timer = setTimeout(() => {
      running = purgeExpiredEvents(core, () => stopped)
        .then(() => undefined)
        .catch((err: unknown) => core.log.warn({ err }, 'purging old events failed'))
        .finally(() => {
          running = undefined;
          if (!stopped) next(EVERY_MS);
        });
    }, delayMs);
    timer.unref();
  };
  next(Math.floor(Math.random() * EVERY_MS));
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
