// The webhook worker (DESIGN §9): turns events into deliveries, claims due deliveries with a lease, sends them signed, records every attempt.
import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { CompiledModel } from '../model/compile.js';
import { newestVersion } from '../model/compile.js';
import type { StoredRecord } from '../model/records.js';
import type { ApiVersion } from '../model/versions.js';
import { DISPATCH_ROW, WEBHOOK_DELIVERIES, WEBHOOK_DISPATCH, type DeliveryAttempt } from '../platform/webhook-deliveries.js';
import { WEBHOOK_ENDPOINTS, signingSecrets } from '../platform/webhook-endpoints.js';
import type { Store, StoredEvent, Tx } from '../store/types.js';
import { nextAttemptDelayMs } from '../webhooks/retry-schedule.js';
import type { SendInput, SendOutcome } from '../webhooks/sender.js';
import { eventView } from './event-view.js';
import { globMatches } from './visibility.js';

export interface WebhookWorkerOptions {
  /** Seconds before each attempt, the first included (CANON_WEBHOOK_RETRY_SCHEDULE). */
  schedule: readonly number[];
  /** How long a claim holds a delivery: a worker that died holding it leaves it due again after this (DESIGN §9: within 30 s). */
  leaseMs: number;
  /** Deliveries claimed per round, and events dispatched per transaction. */
  batch: number;
  /** Attempts in flight at once. */
  concurrency: number;
  /** How often the worker looks without a wake-up (retries come due, other processes' events). */
  pollMs: number;
  /** Payloads above this are sent thin: id, type and where to fetch the object (DESIGN §9: 64 KiB). */
  maxPayloadBytes: number;
  /** Failing this long without a success disables the endpoint (DESIGN §9: 5 days). */
  failureWindowMs: number;
  random: () => number;
}

export interface DeliveryObserver {
  attempted(result: 'succeeded' | 'retrying' | 'failed', seconds: number): void;
}

interface Logger {
  warn(obj: unknown, msg?: string): void;
}

type Sender = { send(input: SendInput): Promise<SendOutcome> };

interface Attempted {
  delivery: StoredRecord;
  outcome: SendOutcome | { skipped: string };
}

const SYSTEM_ROUNDS = 1_000;

function typeMatches(patterns: unknown, type: string): boolean {
  const list = Array.isArray(patterns) ? (patterns as string[]) : ['*'];
  return list.some((p) => globMatches(p, type));
}

/**
 * At-least-once from the log to the receiver, whichever process dies when:
 * - dispatch: one transaction locks the dispatcher's position, reads the events after it, inserts one
 *   delivery per matching enabled endpoint and moves the position; killed before commit, none of it happened.
 * - claim: one transaction takes due deliveries past those other workers hold (SKIP LOCKED on PostgreSQL)
 *   and moves their `next_attempt_at` one lease ahead with a fresh claim id; a worker killed after that
 *   leaves them due again when the lease ends.
 * - attempt: outside any transaction (a slow receiver holds no lock), then one transaction records each
 *   result, only if the delivery still carries this worker's claim.
 * A receiver may therefore see an event twice (a worker killed between its 2xx and the record): it
 * deduplicates by `webhook-id`, as Standard Webhooks asks.
 */
export class WebhookWorker {
  private loop: Promise<void> | undefined;
  private again = false;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  /** Whether the last round reached the store and finished: /readyz reports it. */
  private healthy = true;

  constructor(
    private readonly store: Store,
    private readonly model: CompiledModel,
    private readonly sender: Sender,
    private readonly openSecret: (sealed: string) => string,
    private readonly clock: () => Date,
    private readonly options: WebhookWorkerOptions,
    private readonly log: Logger,
    private readonly observer?: DeliveryObserver,
  ) {}

  /** Turns the events after the dispatcher's position into deliveries; returns how many events it took. */
  async dispatch(): Promise<number> {
    const now = this.clock().toISOString();
    return this.store.transaction(async (tx) => {
      const cursor = await tx.lock(WEBHOOK_DISPATCH, DISPATCH_ROW, 'update');
      if (!cursor) {
        // The first worker ever starts at the head: endpoints get the events from their creation on, not history.
        await tx.insert(WEBHOOK_DISPATCH, { id: DISPATCH_ROW, version: 1, created_at: now, updated_at: now, position: await tx.lastEventSequence() });
        return 0;
      }
      const events = await tx.listEvents(Number(cursor.position), this.options.batch);
      if (events.length === 0) return 0;
      const endpoints = (await tx.list(WEBHOOK_ENDPOINTS, { where: [{ path: 'status', op: 'eq', value: 'enabled' }], orderBy: [{ path: 'id', desc: false }], limit: 10_000 })).rows;
      for (const event of events) {
        for (const endpoint of endpoints) {
          if (!typeMatches(endpoint.events, event.type)) continue;
          await tx.insert(WEBHOOK_DELIVERIES, {
            id: uuidv7(),
            version: 1,
            created_at: now,
            updated_at: now,
            endpoint_id: endpoint.id,
            event_id: event.id,
            event_type: event.type,
            status: 'pending',
            attempts: [],
            next_attempt_at: now,
            claim: null,
          });
        }
      }
      await tx.update(WEBHOOK_DISPATCH, { ...cursor, version: cursor.version + 1, updated_at: now, position: events[events.length - 1]!.sequence });
      return events.length;
    });
  }

  /** Claims due deliveries, attempts them, records the results; returns how many it claimed. */
  async deliverDue(): Promise<number> {
    const now = this.clock();
    const claim = randomUUID();
    const leaseEnd = new Date(now.getTime() + this.options.leaseMs).toISOString();
    const claimed = await this.store.transaction(async (tx) => {
      const { rows } = await tx.list(WEBHOOK_DELIVERIES, {
        where: [
          { path: 'status', op: 'eq', value: 'pending' },
          { path: 'next_attempt_at', op: 'lte', value: now.toISOString() },
        ],
        orderBy: [
          { path: 'next_attempt_at', desc: false },
          { path: 'id', desc: false },
        ],
        limit: this.options.batch,
        skipLocked: true,
      });
      for (const d of rows) await tx.update(WEBHOOK_DELIVERIES, { ...d, version: d.version + 1, updated_at: now.toISOString(), next_attempt_at: leaseEnd, claim });
      return rows;
    });
    if (claimed.length === 0) return 0;
    const results: Attempted[] = [];
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < claimed.length) {
        const delivery = claimed[next++]!;
        // A delivery that cannot even be prepared (a secret sealed under another CANON_SECRET) fails alone,
        // recorded with its reason, instead of failing the round and coming back at every lease.
        const outcome = await this.attempt(delivery).catch((err: unknown) => ({ skipped: `not sent: ${err instanceof Error ? err.message : String(err)}` }));
        results.push({ delivery, outcome });
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, claimed.length) }, lane));
    await this.store.transaction((tx) => this.record(tx, results, claim));
    return claimed.length;
  }

  private versionFor(endpoint: StoredRecord): ApiVersion {
    return this.model.versions.find((v) => v.date === endpoint.api_version) ?? newestVersion(this.model);
  }

  /** One attempt: the event rendered in the endpoint's version, thin past the size bound, signed with every live secret. */
  private async attempt(delivery: StoredRecord): Promise<SendOutcome | { skipped: string }> {
    const endpoint = await this.store.get(WEBHOOK_ENDPOINTS, String(delivery.endpoint_id));
    if (!endpoint) return { skipped: 'the endpoint no longer exists' };
    if (endpoint.status !== 'enabled') return { skipped: `the endpoint is disabled${endpoint.disabled_reason ? ` (${String(endpoint.disabled_reason)})` : ''}` };
    const event = await this.store.findEvent(String(delivery.event_id));
    if (!event) return { skipped: 'the event is no longer kept' };
    const version = this.versionFor(endpoint);
    let body = JSON.stringify(eventView(event, version));
    if (Buffer.byteLength(body) > this.options.maxPayloadBytes) {
      body = JSON.stringify({
        id: event.id,
        type: event.type,
        sequence: event.sequence,
        created_at: event.created_at,
        api_version: version.date,
        thin: true,
        data: { object: { id: event.object_id, url: `/${version.name}/${event.resource}/${event.object_id}` } },
      });
    }
    const nowIso = this.clock().toISOString();
    const secrets = signingSecrets(endpoint)
      .filter((s) => s.until === null || s.until > nowIso)
      .map((s) => this.openSecret(s.sealed));
    return this.sender.send({ url: String(endpoint.url), id: event.id, timestamp: Math.floor(this.clock().getTime() / 1000), body, secrets });
  }

  /** Records each result under the claim it was made with; endpoints that answered 410, or failed for days, are disabled. */
  private async record(tx: Tx, results: Attempted[], claim: string): Promise<void> {
    const now = this.clock();
    const nowIso = now.toISOString();
    const endpoints = new Map<string, { ok: boolean; gone: boolean }>();
    for (const { delivery, outcome } of [...results].sort((a, b) => (a.delivery.id < b.delivery.id ? -1 : 1))) {
      const current = await tx.lock(WEBHOOK_DELIVERIES, delivery.id, 'update');
      if (!current || current.claim !== claim) continue;
      const attempt: DeliveryAttempt =
        'skipped' in outcome
          ? { at: nowIso, status_code: null, duration_ms: 0, error: outcome.skipped }
          : { at: nowIso, status_code: outcome.statusCode, duration_ms: Math.round(outcome.durationMs), error: outcome.error };
      const attempts = [...((current.attempts as DeliveryAttempt[] | null) ?? []), attempt];
      let status: string;
      let nextAt: string | null = null;
      if ('skipped' in outcome) status = 'failed';
      else if (outcome.ok) status = 'succeeded';
      else if (outcome.gone) status = 'failed';
      else {
        const delay = nextAttemptDelayMs(this.options.schedule, attempts.length, this.options.random, outcome.retryAfterSeconds);
        status = delay === null ? 'failed' : 'pending';
        if (delay !== null) nextAt = new Date(now.getTime() + delay).toISOString();
      }
      await tx.update(WEBHOOK_DELIVERIES, { ...current, version: current.version + 1, updated_at: nowIso, status, attempts, next_attempt_at: nextAt, claim: null });
      if (!('skipped' in outcome)) {
        const seen = endpoints.get(String(current.endpoint_id)) ?? { ok: false, gone: false };
        endpoints.set(String(current.endpoint_id), { ok: seen.ok || outcome.ok, gone: seen.gone || outcome.gone });
        this.observer?.attempted(status === 'pending' ? 'retrying' : (status as 'succeeded' | 'failed'), outcome.durationMs / 1000);
      }
    }
    for (const [id, seen] of [...endpoints].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const endpoint = await tx.lock(WEBHOOK_ENDPOINTS, id, 'update');
      if (!endpoint || endpoint.status !== 'enabled') continue;
      let changes: Record<string, unknown> | undefined;
      if (seen.gone) changes = { status: 'disabled', disabled_reason: 'the receiver answered 410 Gone' };
      else if (seen.ok) changes = endpoint.failing_since ? { failing_since: null } : undefined;
      else if (!endpoint.failing_since) changes = { failing_since: nowIso };
      else if (now.getTime() - Date.parse(String(endpoint.failing_since)) >= this.options.failureWindowMs) {
        changes = { status: 'disabled', disabled_reason: 'deliveries failed for 5 days' };
      }
      if (changes) await tx.update(WEBHOOK_ENDPOINTS, { ...endpoint, ...changes, version: endpoint.version + 1, updated_at: nowIso });
    }
  }

  /** Dispatches and delivers until nothing is due; a wake during a round makes one more. */
  wake(): void {
    if (this.stopping) return;
    if (this.loop) {
      this.again = true;
      return;
    }
    this.loop = (async () => {
      for (let round = 0; round < SYSTEM_ROUNDS && !this.stopping; round++) {
        this.again = false;
        let busy = false;
        try {
          busy = (await this.dispatch()) > 0;
          busy = (await this.deliverDue()) === this.options.batch || busy;
        } catch (err) {
          this.healthy = false;
          this.log.warn({ err }, 'webhook worker round failed');
          return;
        }
        this.healthy = true;
        if (!busy && !this.again) return;
      }
    })().finally(() => {
      this.loop = undefined;
    });
  }

  /** False after a round that failed (the store unreachable), until a round succeeds again. */
  get ok(): boolean {
    return this.healthy && !this.stopping;
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Stops taking work and waits for the round under way (its claims are recorded or, if cut, expire). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.loop;
  }
}
