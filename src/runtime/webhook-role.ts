// Composes the webhook delivery worker of a process from its configuration: the sender, retry schedule, pacing and metrics around src/webhooks/worker.ts.
import { open } from '../lib/key-crypto.js';
import type { Config } from '../config/config.js';
import { WebhookWorker } from '../webhooks/worker.js';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from '../webhooks/retry-schedule.js';
import { WebhookSender } from '../webhooks/sender.js';
import type { Core } from './core.js';
import { SEAL_PURPOSE } from '../webhooks/endpoint-options.js';
import { BackgroundPacer } from './background-pacer.js';
import { pendingDeliveries } from '../webhooks/deliveries.js';

export function retrySchedule(config: Config): readonly number[] {
  return config.webhookRetrySchedule ? parseRetrySchedule(config.webhookRetrySchedule) : DEFAULT_RETRY_SCHEDULE;
}

/**
 * The delivery worker on `core`: woken by commits anywhere, polling for retries that come due. `embedded`:
 * it shares its process with the API, and yields to it while writes saturate the event loop.
 */
export function startWebhookWorker(core: Core, embedded: boolean): { stop(): Promise<void>; ok(): boolean } {
  const { config, metrics } = core;
  const pacer = embedded ? new BackgroundPacer() : undefined;
  const stopCounting = pacer ? core.events.onCommitted(() => pacer.noteWrite()) : undefined;
  const sender = new WebhookSender({ policy: { allowPrivate: config.webhookAllowPrivate }, timeoutMs: config.webhookTimeoutMs });
  const worker = new WebhookWorker(
    core.store,
    core.model,
    sender,
    (sealed) => open(sealed, `${SEAL_PURPOSE}:${core.secret}`),
    core.clock,
    {
      schedule: retrySchedule(config),
      leaseMs: config.workerLeaseMs,
      batch: 100,
      concurrency: 32,
      pollMs: Math.min(config.eventPollMs, 1000),
      maxPayloadBytes: 64 * 1024,
      failureWindowMs: 5 * 24 * 3600 * 1000,
      random: Math.random,
      ...(pacer ? { pace: () => pacer.wait() } : {}),
    },
    core.log,
    {
      attempted: (result, seconds) => {
        metrics.deliveries.inc({ result });
        metrics.deliveryLatency.observe(seconds);
      },
    },
  );
  // Deliveries waiting (due or scheduled), read when scraped.
  metrics.gauge('canon_webhook_queue_depth', 'Webhook deliveries pending (due now or scheduled for a retry).', () => pendingDeliveries(core.store));
  const stopWaking = core.events.on(() => worker.wake());
  worker.start();
  return {
    ok: () => worker.ok,
    stop: async () => {
      stopWaking();
      stopCounting?.();
      pacer?.stop();
      await worker.stop();
      await sender.close();
    },
  };
}
