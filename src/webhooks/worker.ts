// The webhook worker (DESIGN §9): turns events into deliveries, claims due deliveries with a lease, sends them signed, records every attempt.
import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { CompiledModel } from '../model/compile.js';
import { newestVersion } from '../model/compile.js';
import type { StoredRecord } from '../model/records.js';
import type { ApiVersion } from '../model/versions.js';
import { WEBHOOK_DELIVERIES, type DeliveryAttempt } from './deliveries.js';
import { WEBHOOK_ENDPOINTS, signingSecrets } from './endpoints.js';
import type { Store, StoredEvent, Tx } from '../store/types.js';
import { anyDue, dueQuery } from '../store/due-rows.js';
import { nextAttemptDelayMs } from './retry-schedule.js';
import type { SendInput, SendOutcome } from './sender.js';
import { DispatchPositions, dispatching } from './dispatch-positions.js';
import { eventView, thinEventView } from '../events/event-view.js';
import { globMatches } from '../services/event-visibility.js';
import { Audiences } from './endpoint-audience.js';

export interface WebhookWorkerOptions {
  /** Seconds before each attempt, the first included (CANON_WEBHOOK_RETRY_SCHEDULE). */
  schedule: readonly number[];
  /** How long a claim holds a delivery: a worker that died holding it leaves it due again after this (DESIGN §9: within 30 s). */
  leaseMs: number;
  /** Deliveries claimed per round, and events dispatched per transaction. */
  batch: number;
  /** Attempts in flight at once per batch (each batch as long as one batch alone, whatever else is under way: its lease is what it was). */
  concurrency: number;
  /** Batches under way at once on a backlog: one is dispatched while another is attempted and recorded (default 3). */
  pipeline?: number;
  /** How often the worker looks without a wake-up (retries come due, other processes' events). */
  pollMs: number;
  /** Payloads above this are sent thin: id, type and where to fetch the object (DESIGN §9: 64 KiB). */
  maxPayloadBytes: number;
  /** Failing this long without a success disables the endpoint (DESIGN §9: 5 days). */
  failureWindowMs: number;
  random: () => number;
  /** Awaited before each round: an embedded worker yields to the requests of its process (src/runtime/background-pacer.ts). */
  pace?: () => Promise<void>;
}

export interface DeliveryObserver {
  attempted(result: 'succeeded' | 'retrying' | 'failed', seconds: number): void;
}

interface Logger {
  warn(obj: unknown, msg?: string): void;
}

type Sender = { send(input: SendInput): Promise<SendOutcome> };

/** A claimed delivery the worker gives back unattempted (it is stopping). */
const RELEASED = { released: true } as const;

interface Attempted {
  delivery: StoredRecord;
  outcome: SendOutcome | { skipped: string } | typeof RELEASED;
}

/** A delivery this worker holds under a claim; with its event when the worker has it in hand (it dispatched it). */
interface Claimed {
  delivery: StoredRecord;
  event?: StoredEvent;
}

/** Deliveries claimed together: attempted, then recorded in one transaction under their claim id. */
interface Batch {
  claim: string;
  claimed: Claimed[];
}

/** Where and how a batch's deliveries to one endpoint are sent, or why they are not. */
type Target = { url: string; version: ApiVersion; secrets: string[]; sees: (event: StoredEvent) => boolean } | { skipped: string };

/** Payloads rendered in a batch, by event and version: an event to several endpoints of one version is rendered once. */
type Bodies = Map<string, string>;

function notSent(err: unknown): string {
  return `not sent: ${err instanceof Error ? err.message : String(err)}`;
}

const SYSTEM_ROUNDS = 1_000;
/** Batches under way at once on a backlog, unless the options say otherwise. */
const PIPELINE = 3;

function typeMatches(patterns: unknown, type: string): boolean {
  const list = Array.isArray(patterns) ? (patterns as string[]) : ['*'];
  return list.some((p) => globMatches(p, type));
}

/**
 * At-least-once from the log to the receiver, whichever process dies when:
 * - dispatch: one transaction locks the dispatcher's position, reads the events after it, inserts one
 *   delivery per matching enabled endpoint, already claimed by this worker (as a claim would leave it), and
 *   moves the position; killed before commit, none of it happened; killed after, the lease runs out as below.
 * - claim (retries, and deliveries whose lease ran out): one transaction takes due deliveries past those other
 *   workers hold (SKIP LOCKED on PostgreSQL) and moves their `next_attempt_at` one lease ahead with a fresh
 *   claim id; a worker killed after that leaves them due again when the lease ends.
 * - attempt: outside any transaction (a slow receiver holds no lock), then one transaction records each
 *   result, only if the delivery still carries this worker's claim.
 * A receiver may therefore see an event twice (a worker killed between its 2xx and the record): it
 * deduplicates by `webhook-id`, as Standard Webhooks asks.
 */
export class WebhookWorker {
  /** The runners of rounds under way (one, or up to `pipeline` on a backlog). */
  private readonly runners = new Set<Promise<void>>();
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

  /**
   * Turns events into deliveries for the endpoints furthest behind (src/webhooks/dispatch-positions.ts); returns how
   * many events it read for them, whether another dispatch may find more at once, and the deliveries it made. They
   * are inserted already claimed by this worker (a fresh claim id, `next_attempt_at` one lease ahead): the same
   * state a claim would give them, committed with them, so their first attempt needs no claiming transaction; a
   * worker killed before attempting leaves them due when the lease ends, as any claim.
   */
  async dispatch(): Promise<{ taken: number; more: boolean; batch: Batch }> {
    const now = this.clock();
    const nowIso = now.toISOString();
    const claim = randomUUID();
    const leaseEnd = new Date(now.getTime() + this.options.leaseMs).toISOString();
    const claimed: Claimed[] = [];
    // Nothing to dispatch: no lock taken, no transaction (DispatchPositions.idle says why).
    if (await DispatchPositions.idle(this.store, nowIso)) return { taken: 0, more: false, batch: { claim, claimed } };
    const { taken, more } = await dispatching(this.store, async (tx) => {
      claimed.length = 0;
      const positions = await DispatchPositions.open(tx, nowIso);
      if (positions.cohort.length === 0) return { taken: 0, more: false };
      const read = await tx.listEvents(positions.from, this.options.batch);
      // The cohort stops where the next endpoints stand (`until`): from there on both are served by one read.
      const { until } = positions;
      const events = until === undefined ? read : read.filter((e) => e.sequence <= until);
      const full = read.length === this.options.batch;
      // Every event up to `until` is readable (a position is only ever a sequence read or a head): when this read
      // went past it, or reached the end of the log, none lies between the last event taken and `until`.
      const to = until !== undefined && (events.length < read.length || !full) ? until : (events[events.length - 1]?.sequence ?? positions.from);
      const deliveries: StoredRecord[] = [];
      // What each endpoint's owner may see now (its events patterns included): an event it may not see gets no
      // delivery at all, so not even its id and type reach the owner's delivery list (DESIGN §9).
      const audiences = new Audiences(tx, this.model);
      const cohort = await Promise.all(positions.cohort.map(async (endpoint) => ({ endpoint, audience: await audiences.of(endpoint) })));
      for (const event of events) {
        for (const { endpoint, audience } of cohort) {
          if (!typeMatches(endpoint.events, event.type) || !('sees' in audience) || !audience.sees(event)) continue;
          const delivery: StoredRecord = {
            id: uuidv7(),
            version: 1,
            created_at: nowIso,
            updated_at: nowIso,
            endpoint_id: endpoint.id,
            event_id: event.id,
            event_type: event.type,
            status: 'pending',
            attempts: [],
            next_attempt_at: leaseEnd,
            claim,
          };
          deliveries.push(delivery);
          claimed.push({ delivery, event });
        }
      }
      // One statement for the batch (PostgreSQL): the frontier's lock, which every dispatcher waits for, is held that much shorter.
      await tx.insertMany(WEBHOOK_DELIVERIES, deliveries);
      await positions.moveTo(to);
      // More at once: a full batch, or endpoints behind that just joined others (their next read serves all).
      return { taken: events.length, more: full || (until !== undefined && to === until) };
    });
    return { taken, more, batch: { claim, claimed } };
  }

  /** Claims due deliveries (retries, and first attempts whose dispatcher's lease ran out) past those other workers hold. */
  async claimDue(): Promise<Batch> {
    const now = this.clock();
    const claim = randomUUID();
    const leaseEnd = new Date(now.getTime() + this.options.leaseMs).toISOString();
    const due = dueQuery('pending', now, this.options.batch);
    if (!(await anyDue(this.store, WEBHOOK_DELIVERIES, due))) return { claim, claimed: [] };
    const rows = await this.store.transaction(async (tx) => {
      const { rows } = await tx.list(WEBHOOK_DELIVERIES, { ...due, skipLocked: true });
      await tx.updateMany(
        WEBHOOK_DELIVERIES,
        rows.map((d) => ({ ...d, version: d.version + 1, updated_at: now.toISOString(), next_attempt_at: leaseEnd, claim })),
      );
      return rows;
    });
    return { claim, claimed: rows.map((delivery) => ({ delivery })) };
  }

  /** Attempts a claimed batch and records the results under its claim. */
  async deliver(batch: Batch): Promise<void> {
    const { claimed, claim } = batch;
    if (claimed.length === 0) return;
    // Each endpoint read once per batch, its secrets opened once (not once per delivery).
    const endpointIds = [...new Set(claimed.map((c) => String(c.delivery.endpoint_id)))];
    const endpoints = new Map((await this.store.getMany(WEBHOOK_ENDPOINTS, endpointIds)).map((e) => [e.id, e]));
    const targets = new Map<string, Promise<Target>>();
    // Each endpoint's owner read once per batch, as it is now: a change since the dispatch is seen by this attempt.
    const audiences = new Audiences(this.store, this.model);
    const targetOf = (id: string): Promise<Target> => {
      let target = targets.get(id);
      if (!target) targets.set(id, (target = this.target(endpoints.get(id), audiences)));
      return target;
    };
    const bodies: Bodies = new Map();
    const results: Attempted[] = [];
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < claimed.length && !this.stopping) {
        const c = claimed[next++]!;
        // A delivery that cannot even be prepared (a secret sealed under another CANON_SECRET) fails alone,
        // recorded with its reason, instead of failing the round and coming back at every lease.
        const outcome = await targetOf(String(c.delivery.endpoint_id))
          .then((target) => this.attempt(c, target, bodies))
          .catch((err: unknown) => ({ skipped: notSent(err) }));
        results.push({ delivery: c.delivery, outcome });
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, claimed.length) }, lane));
    // Stopping: those not attempted yet go back, due now.
    const released = claimed.slice(next).map((c) => c.delivery);
    await this.store.transaction((tx) => this.record(tx, results, claim, released));
  }

  /** Claims due deliveries, attempts them, records the results; returns how many it claimed. */
  async deliverDue(): Promise<number> {
    const batch = await this.claimDue();
    await this.deliver(batch);
    return batch.claimed.length;
  }

  private versionFor(endpoint: StoredRecord): ApiVersion {
    return this.model.versions.find((v) => v.date === endpoint.api_version) ?? newestVersion(this.model);
  }

  /** What every delivery to one endpoint shares in a batch: its URL, version and opened secrets, or why none is sent. */
  private async target(endpoint: StoredRecord | undefined, audiences: Audiences): Promise<Target> {
    if (!endpoint) return { skipped: 'the endpoint no longer exists' };
    if (endpoint.status !== 'enabled') return { skipped: `the endpoint is disabled${endpoint.disabled_reason ? ` (${String(endpoint.disabled_reason)})` : ''}` };
    const audience = await audiences.of(endpoint);
    if ('none' in audience) return { skipped: `not sent: ${audience.none}` };
    try {
      const nowIso = this.clock().toISOString();
      const secrets = signingSecrets(endpoint)
        .filter((s) => s.until === null || s.until > nowIso)
        .map((s) => this.openSecret(s.sealed));
      return { url: String(endpoint.url), version: this.versionFor(endpoint), secrets, sees: audience.sees };
    } catch (err) {
      return { skipped: notSent(err) };
    }
  }

  /** One attempt: the event rendered in the endpoint's version, thin past the size bound, signed with every live secret. */
  private async attempt(claimed: Claimed, target: Target, bodies: Bodies): Promise<SendOutcome | { skipped: string }> {
    if ('skipped' in target) return target;
    const event = claimed.event ?? (await this.store.findEvent(String(claimed.delivery.event_id)));
    if (!event) return { skipped: 'the event is no longer kept' };
    // Decided again at send time: a retry owed from before the owner was demoted or narrowed is not sent.
    if (!target.sees(event)) return { skipped: 'not sent: the endpoint’s owner may no longer see this event' };
    const { version } = target;
    const key = `${event.id} ${version.name}`;
    let body = bodies.get(key);
    if (body === undefined) {
      body = JSON.stringify(eventView(event, version));
      if (Buffer.byteLength(body) > this.options.maxPayloadBytes) {
        body = JSON.stringify(thinEventView(event, version));
      }
      bodies.set(key, body);
    }
    return this.sender.send({ url: target.url, id: event.id, timestamp: Math.floor(this.clock().getTime() / 1000), body, secrets: target.secrets });
  }

  /**
   * Records each result under the claim it was made with; endpoints that answered 410, or failed for days, are disabled.
   * The batch's rows are read and held in one statement; a row another transaction holds at that moment (an
   * admin's action, a cascade) is then locked alone, waiting for it, so every attempt made under a claim that
   * still holds is recorded. An endpoint is locked only when its state must change, and the change decided again
   * under the lock: deciding that nothing changes needs no lock, as that decision commits nothing.
   */
  private async record(tx: Tx, results: Attempted[], claim: string, released: StoredRecord[] = []): Promise<void> {
    const now = this.clock();
    const nowIso = now.toISOString();
    const sorted = [...results, ...released.map((delivery) => ({ delivery, outcome: RELEASED }))].sort((a, b) => (a.delivery.id < b.delivery.id ? -1 : 1));
    const ids = sorted.map((r) => r.delivery.id);
    const held = new Map(
      (await tx.list(WEBHOOK_DELIVERIES, { where: [{ path: 'id', op: 'in', value: ids }], orderBy: [{ path: 'id', desc: false }], limit: ids.length, skipLocked: true })).rows.map(
        (d) => [d.id, d],
      ),
    );
    const endpoints = new Map<string, { ok: boolean; gone: boolean }>();
    const updates: StoredRecord[] = [];
    for (const { delivery, outcome } of sorted) {
      const current = held.get(delivery.id) ?? (await tx.lock(WEBHOOK_DELIVERIES, delivery.id, 'update'));
      if (!current || current.claim !== claim) continue;
      if ('released' in outcome) {
        updates.push({ ...current, version: current.version + 1, updated_at: nowIso, next_attempt_at: nowIso, claim: null });
        continue;
      }
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
      updates.push({ ...current, version: current.version + 1, updated_at: nowIso, status, attempts, next_attempt_at: nextAt, claim: null });
      if (!('skipped' in outcome)) {
        const seen = endpoints.get(String(current.endpoint_id)) ?? { ok: false, gone: false };
        endpoints.set(String(current.endpoint_id), { ok: seen.ok || outcome.ok, gone: seen.gone || outcome.gone });
        this.observer?.attempted(status === 'pending' ? 'retrying' : (status as 'succeeded' | 'failed'), outcome.durationMs / 1000);
      }
    }
    await tx.updateMany(WEBHOOK_DELIVERIES, updates);
    if (endpoints.size === 0) return;
    const ordered = [...endpoints].sort(([a], [b]) => (a < b ? -1 : 1));
    const read = new Map(
      (
        await tx.getMany(
          WEBHOOK_ENDPOINTS,
          ordered.map(([id]) => id),
        )
      ).map((e) => [e.id, e]),
    );
    for (const [id, seen] of ordered) {
      const unlocked = read.get(id);
      if (!unlocked || !this.endpointChange(unlocked, seen, now)) continue;
      const endpoint = await tx.lock(WEBHOOK_ENDPOINTS, id, 'update');
      const changes = endpoint && this.endpointChange(endpoint, seen, now);
      if (changes) await tx.update(WEBHOOK_ENDPOINTS, { ...endpoint, ...changes, version: endpoint.version + 1, updated_at: nowIso });
    }
  }

  /** What the attempts of a batch change on their endpoint (disabled, failing since, recovered), or undefined for nothing. */
  private endpointChange(endpoint: StoredRecord, seen: { ok: boolean; gone: boolean }, now: Date): Record<string, unknown> | undefined {
    if (endpoint.status !== 'enabled') return undefined;
    if (seen.gone) return { status: 'disabled', disabled_reason: 'the receiver answered 410 Gone' };
    if (seen.ok) return endpoint.failing_since ? { failing_since: null } : undefined;
    if (!endpoint.failing_since) return { failing_since: now.toISOString() };
    if (now.getTime() - Date.parse(String(endpoint.failing_since)) >= this.options.failureWindowMs) return { status: 'disabled', disabled_reason: 'deliveries failed for 5 days' };
    return undefined;
  }

  /** Dispatches and delivers until nothing is due; a wake during a round makes one more. */
  wake(): void {
    if (this.stopping) return;
    if (this.runners.size > 0) {
      this.again = true;
      return;
    }
    this.spawn();
  }

  /**
   * Starts one more runner of rounds, up to `pipeline`. Each round is a chain of waits (the dispatching
   * transaction, the receivers, the recording transaction); on a backlog, runners overlap them: one dispatches
   * the next batch while another's attempts are under way. Dispatches still take turns on the position's lock.
   */
  private spawn(): void {
    if (this.stopping || this.runners.size >= (this.options.pipeline ?? PIPELINE)) return;
    const runner: Promise<void> = this.rounds().finally(() => this.runners.delete(runner));
    this.runners.add(runner);
  }

  private async rounds(): Promise<void> {
    for (let round = 0; round < SYSTEM_ROUNDS && !this.stopping; round++) {
      this.again = false;
      let busy = false;
      try {
        await this.options.pace?.();
        if (this.stopping) return;
        const dispatched = await this.dispatch();
        // More waiting (a full batch, endpoints behind that joined others): another runner takes them while this batch is attempted.
        if (dispatched.more) this.spawn();
        await this.deliver(dispatched.batch);
        busy = dispatched.more || dispatched.taken > 0;
        // Stopping: no new claim (a worker told to stop takes no work it could not finish).
        if (!this.stopping) busy = (await this.deliverDue()) === this.options.batch || busy;
      } catch (err) {
        this.healthy = false;
        this.log.warn({ err }, 'webhook worker round failed');
        return;
      }
      this.healthy = true;
      if (!busy && !this.again) return;
    }
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

  /**
   * Stops taking work and waits for the rounds under way: attempts already made to a receiver finish (each bounded
   * by the sender's timeout) and are recorded; deliveries claimed but not yet attempted are released, due at once
   * for another worker, rather than left to their lease (a SIGTERM'd `canon worker`, DESIGN §9).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    while (this.runners.size > 0) await Promise.all(this.runners);
  }
}
