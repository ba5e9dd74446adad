// The process's Prometheus metrics (prom-client, text format 0.0.4): deliveries, delivery latency, queue depth, stream clients, events written.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * One registry per runtime (not prom-client's global one), so several runtimes in one process (tests,
 * embedding) never share or double-register metrics. Gauges whose truth lives elsewhere (streams held,
 * the delivery queue) are read when scraped, through the callbacks given to `gauge`.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly eventsWritten = new Counter({ name: 'canon_events_written_total', help: 'Events committed by this process.', registers: [this.registry] });
  readonly deliveries = new Counter({
    name: 'canon_webhook_deliveries_total',
    help: 'Webhook delivery attempts by result: succeeded, retrying (failed, another attempt is scheduled) or failed (dead-lettered or disabled).',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly deliveryLatency = new Histogram({
    name: 'canon_webhook_delivery_duration_seconds',
    help: 'Duration of webhook delivery attempts, from connect to the receiver’s answer.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
    registers: [this.registry],
  });

  readonly apiRequests = new Counter({
    name: 'canon_api_requests_total',
    help: 'Authenticated requests to resource routes, by API version.',
    labelNames: ['version'],
    registers: [this.registry],
  });
  readonly deprecatedRequests = new Counter({
    name: 'canon_deprecated_api_requests_total',
    help: 'Authenticated requests to a deprecated API version, by version and principal (api_key:<id>, oauth_client:<id>, user:<id>): who still has to migrate.',
    labelNames: ['version', 'principal'],
    registers: [this.registry],
  });
  /** The labelled counter of each version, looked up once: this runs on every resource request. */
  private readonly byVersion = new Map<string, { inc(): void }>();

  /** One authenticated resource request in `version`; for a deprecated one, who made it. */
  versionRequest(version: string, deprecated: boolean, principal: string): void {
    let counter = this.byVersion.get(version);
    if (!counter) this.byVersion.set(version, (counter = this.apiRequests.labels(version)));
    counter.inc();
    if (deprecated) this.deprecatedRequests.labels(version, principal).inc();
  }

  /** A gauge read at scrape time; a failing read leaves it unset rather than failing the scrape. */
  gauge(name: string, help: string, read: () => number | Promise<number>): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        try {
          this.set(await read());
        } catch {
          this.reset();
        }
      },
    });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
