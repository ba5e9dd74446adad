// The worker role: background work on the core, with no HTTP (the idempotency purge and asynchronous actions; event deliveries join it).
import { OperationRunner } from '../services/operations.js';
import type { Core } from './core.js';
import { schedulePurge } from './purge-schedule.js';
import { scheduleEventPurge } from './event-purge.js';
import { startWebhookWorker } from './webhook-role.js';

/** How often a worker looks for due operations that no request of its own process announced (another process's, or a lapsed lease). */
const OPERATION_POLL_MS = 200;

export interface WorkerRole {
  /** The runner of asynchronous actions (tests drive it directly). */
  operations: OperationRunner;
  /** Stops the background work, waiting for what is under way. */
  close(): Promise<void>;
}

/** Starts every background job on `core`; `canon serve` embeds it (`embedded`), a dedicated worker process runs it alone. */
export function startWorker(core: Core, embedded: boolean): WorkerRole {
  const stopPurging = schedulePurge(core.idempotency, core.config.idempotencyPurgeIntervalSeconds, core.log);
  const operations = new OperationRunner({
    store: core.store,
    services: core.services,
    clock: core.clock,
    log: core.log,
    leaseMs: core.config.workerLeaseMs,
    timeoutMs: core.config.operationTimeoutMs,
  });
  operations.start(OPERATION_POLL_MS);
  // A request of this process that queued an operation wakes the runner at once, rather than at the next poll.
  const unsubscribe = core.services.onOperationQueued(() => operations.wake());
  const webhooks = startWebhookWorker(core, embedded);
  // An embedded worker that cannot reach the store degrades /readyz; the store check itself already fails it.
  core.optionalChecks.worker = async () => webhooks.ok();
  const stopPurgingEvents = scheduleEventPurge(core);
  return {
    operations,
    close: async () => {
      unsubscribe();
      await webhooks.stop();
      await stopPurgingEvents();
      // Drains: the performs under way finish and settle before the store closes beneath them.
      await operations.stop();
      await stopPurging();
    },
  };
}
