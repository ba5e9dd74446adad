// The idempotency-record purge timer every serving process runs (DESIGN §11: kept 24 h, then purged).
import type { Idempotency } from '../services/idempotency.js';
import type { Logger } from './logger.js';

/**
 * Expired idempotency records are deleted every `seconds` (DESIGN §11: kept 24 h, then purged), first after
 * a random part of the interval so that processes started together do not purge together. The timer never
 * keeps the process alive; a failed purge is logged and tried again next time.
 */
export function schedulePurge(idempotency: Idempotency, seconds: number, log: Logger): () => Promise<void> {
  if (seconds <= 0) return async () => undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const next = (delayMs: number): void => {
    timer = setTimeout(() => {
      running = idempotency
        .purgeExpired()
        .then((n) => {
          if (n > 0) log.info({ purged: n }, 'expired idempotency keys purged');
        })
        .catch((err: unknown) => log.warn({ err }, 'purging expired idempotency keys failed'))
        .finally(() => {
          running = undefined;
          if (!stopped) next(seconds * 1000);
        });
    }, delayMs);
    timer.unref();
  };
  next(Math.floor(Math.random() * seconds * 1000));
  // Shutdown waits for a purge under way, so the store is never closed beneath it.
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
