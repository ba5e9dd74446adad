// The worker role: background work on the core, with no HTTP (today the idempotency purge; event deliveries join it).
import type { Core } from './core.js';
import { schedulePurge } from './purge-schedule.js';

export interface WorkerRole {
  /** Stops the background work, waiting for what is under way. */
  close(): Promise<void>;
}

/** Starts every background job on `core`; `canon serve` embeds it, a dedicated worker process runs it alone. */
export function startWorker(core: Core): WorkerRole {
  const stopPurging = schedulePurge(core.idempotency, core.config.idempotencyPurgeIntervalSeconds, core.log);
  return { close: stopPurging };
}
