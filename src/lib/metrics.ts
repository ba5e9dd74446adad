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
   * Requests per version, and for deprecated versions apart: plain numbers on the request path (this runs on
   * every resource request, the lean GET by id included), handed to Prometheus when scraped. No label names a
   * principal (issue 26.5): the series stay as few as the versions served, and who still calls a deprecated
   * version goes to the log (src/http/versioning/version-usage.ts), not to whoever may scrape.
   */
  private readonly perVersion = new Map<string, number>();
  private readonly deprecatedPerVersion = new Map<string, number>();

  constructor() {
    const perVersion = this.perVersion;
    const deprecatedPerVersion = this.deprecatedPerVersion;
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
      help: 'Authenticated requests to a deprecated API version, by version; the log names who made them ("deprecated API version in use").',
      labelNames: ['version'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [version, count] of deprecatedPerVersion) this.inc({ version }, count);
      },
    });
  }

  /** One authenticated resource request in `version`, counted apart too when the version is deprecated. */
  versionRequest(version: string, deprecated: boolean): void {
    this.perVersion.set(version, (this.perVersion.get(version) ?? 0) + 1);
    if (deprecated) this.deprecatedPerVersion.set(version, (this.deprecatedPerVersion.get(version) ?? 0) + 1);
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
