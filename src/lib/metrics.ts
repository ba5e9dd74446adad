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

  /**
   * Requests per version, and per principal for deprecated versions: plain numbers on the request path (this
   * runs on every resource request, the lean GET by id included), handed to Prometheus when scraped.
   */
  private readonly perVersion = new Map<string, number>();
  private readonly perPrincipal = new Map<string, { version: string; principal: string; count: number }>();

  constructor() {
    const perVersion = this.perVersion;
    const perPrincipal = this.perPrincipal;
    new Counter({
      name: 'canon_api_requests_total',
      help: 'Authenticated requests to resource routes, by API version.',
      labelNames: ['version'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [version, count] of perVersion) this.inc({ version }, count);
      },
    });
    new Counter({
      name: 'canon_deprecated_api_requests_total',
      help: 'Authenticated requests to a deprecated API version, by version and principal (api_key:<id>, oauth_client:<id>, user:<id>): who still has to migrate.',
      labelNames: ['version', 'principal'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { version, principal, count } of perPrincipal.values()) this.inc({ version, principal }, count);
      },
    });
  }

  /** One authenticated resource request in `version`; for a deprecated one, who made it. */
  versionRequest(version: string, deprecated: boolean, principal: string): void {
    this.perVersion.set(version, (this.perVersion.get(version) ?? 0) + 1);
    if (!deprecated) return;
    const key = `${version} ${principal}`;
    const seen = this.perPrincipal.get(key);
    if (seen) seen.count++;
    else this.perPrincipal.set(key, { version, principal, count: 1 });
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
