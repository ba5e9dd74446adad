// The worker of asynchronous actions: claims due operations under a lease, performs them outside any transaction, then settles each.
import { isAppError } from '../errors/app-error.js';
import type { ActionDef } from '../model/types.js';
import { OPERATIONS } from '../platform/operations.js';
import { bumpOperation } from './operation-rows.js';
import { anyDue, dueQuery } from '../store/due-rows.js';
import type { Store, StoredRecord } from '../store/types.js';
import type { ResourceService } from './resource-service.js';

/** What the runner logs through: pino's shape (`log.warn({ err }, 'message')`). */
export interface RunnerLog {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface OperationRunnerOptions {
  store: Store;
  services: ResourceService;
  clock: () => Date;
  log: RunnerLog;
  /**
   * How long a claim holds an operation (30 s): a worker that dies mid-operation leaves it to be claimed
   * again once this has passed. A `perform` that takes longer may run twice at once; hence its idempotency key.
   */
  leaseMs?: number;
  /** At most this many performs in flight at once in this runner's polling loop. */
  concurrency?: number;
  /**
   * How long one `perform` may take (CANON_OPERATION_TIMEOUT_MS, 10 s): past it the attempt has failed and its
   * AbortSignal is aborted so the provider's call can stop; the operation is tried again under the same
   * idempotency key after a backoff (an unanswered call may have been carried out), and failed once
   * `maxAttempts` attempts timed out. Shorter than the lease, so no other worker takes the operation while the
   * attempt may still be running.
   */
  timeoutMs?: number;
  /**
   * Attempts that never settled (the worker died, or settling kept failing) after which an operation is
   * failed rather than claimed again (5): a perform that kills its worker must not run forever.
   */
  maxAttempts?: number;
}

/** An operation this runner claimed, with the object it acts on as it was then. */
export interface ClaimedOperation {
  operation: StoredRecord;
  object: StoredRecord | null;
}

export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_OPERATION_TIMEOUT_MS = 10_000;
const DEFAULT_CONCURRENCY = 8;
const DEFAULT_MAX_ATTEMPTS = 5;
const MAX_ERROR_LENGTH = 1000;

/**
 * At-least-once: an operation is settled only after its `perform` returned, so a worker killed in between
 * leaves it `processing` with a lease that runs out, and another worker performs it again (with the same
 * idempotency key). Workers in several processes share the table: the claim takes rows past those another
 * claim holds (PostgreSQL SKIP LOCKED), so one operation is claimed by one worker at a time.
 */
export class OperationRunner {
  private readonly store: Store;
  private readonly services: ResourceService;
  private readonly clock: () => Date;
  private readonly log: RunnerLog;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly maxAttempts: number;
  private readonly timeoutMs: number;
  /** The performs under way in the loop; stop() waits for them. */
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private intervalMs = 200;
  private running = false;
  /** The loop's claim under way, if any; a wake-up during it asks for another round. */
  private ticking: Promise<void> | undefined;
  private again = false;
  /** The last claim filled every free slot: more may be due, so a freed slot looks again at once. */
  private backlog = false;

  constructor(options: OperationRunnerOptions) {
    this.store = options.store;
    this.services = options.services;
    this.clock = options.clock;
    this.log = options.log;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
  }

  /** Claims at most `limit` due operations, performs them and settles each; returns how many it claimed. */
  async runDue(limit: number): Promise<number> {
    const claimed = await this.claim(limit);
    await Promise.all(claimed.map((c) => this.execute(c)));
    return claimed.length;
  }

  /**
   * The first half of `runDue`: in one transaction, takes the due operations (oldest first) and moves each
   * one's `next_attempt_at` to the end of the lease, then commits, so the claim holds without a transaction
   * left open during the perform. Those that used up their attempts are claimed too, and then failed, which
   * releases their hold on the object (src/model/state-rule.ts).
   */
  async claim(limit: number): Promise<ClaimedOperation[]> {
    if (limit <= 0) return [];
    const now = this.clock();
    const query = dueQuery('processing', now, limit);
    if (!(await anyDue(this.store, OPERATIONS, query))) return [];
    const leaseEnd = new Date(now.getTime() + this.leaseMs).toISOString();
    const abandoned: StoredRecord[] = [];
    const claimed = await this.services.commit(async (tx) => {
      abandoned.length = 0;
      const { rows } = await tx.list(OPERATIONS, { ...query, skipLocked: true });
      const out: ClaimedOperation[] = [];
      for (const row of rows) {
        const attempts = Number(row.attempts ?? 0);
        const operation = await bumpOperation(
          tx,
          row,
          attempts >= this.maxAttempts ? { next_attempt_at: leaseEnd } : { attempts: attempts + 1, next_attempt_at: leaseEnd },
          now.toISOString(),
        );
        if (attempts >= this.maxAttempts) abandoned.push(operation);
        else out.push({ operation, object: this.services.model.resources.has(String(row.resource)) ? await tx.get(String(row.resource), String(row.object_id)) : null });
      }
      return out;
    });
    // Settled after the claim's commit: the object's lock comes before the operation's (the request's lock order).
    for (const op of abandoned) {
      try {
        await this.services.settleOperation(op, { error: `Abandoned after ${String(op.attempts)} attempts that did not finish.` });
      } catch (err) {
        this.log.error({ operation: op.id, err }, 'settling an operation failed; it is attempted again once its lease runs out');
      }
    }
    return claimed;
  }

  /** Performs one claimed operation and settles it; never throws (a failure of the store leaves it to the lease). */
  async execute(claimed: ClaimedOperation): Promise<void> {
    const { operation, object } = claimed;
    const id = operation.id;
    try {
      const action = this.actionOf(operation);
      if (!action?.perform) return await this.services.settleOperation(operation, { error: `The action ${String(operation.action)} no longer exists.` });
      if (!object) return await this.services.settleOperation(operation, { error: 'The object no longer exists.' });
      let changes: Record<string, unknown>;
      try {
        changes = await this.perform(action, object, operation);
      } catch (err) {
        if (isTimeout(err) && Number(operation.attempts) < this.maxAttempts) {
          // A call that did not answer may still have been carried out by the provider (a charge made): failing the
          // operation would let a new one, under a new idempotency key, do it twice. It is tried again under the same key.
          this.log.warn({ operation: id, err }, 'an operation attempt timed out; it is tried again');
          return await this.retryLater(operation);
        }
        this.log.warn({ operation: id, err }, 'an operation failed');
        return await this.services.settleOperation(operation, { error: isTimeout(err) ? `${messageOf(err)} It was tried ${String(operation.attempts)} times.` : messageOf(err) });
      }
      try {
        await this.services.settleOperation(operation, { changes });
      } catch (err) {
        // The change was refused (a transition is not allowed): the operation failed, and its hold ends.
        if (!isAppError(err)) throw err;
        await this.services.settleOperation(operation, { error: err.message });
      }
    } catch (err) {
      this.log.error({ operation: id, err }, 'settling an operation failed; it is attempted again once its lease runs out');
    }
  }

  /**
   * One attempt of `perform`, bounded by `timeoutMs`: past it the attempt throws a TimeoutError (a failed attempt,
   * tried again under the same key until `maxAttempts`), and the signal it was given is aborted so the provider's call can stop. A `perform` that
   * ignores the signal runs on unawaited; its result is dropped, the operation being settled already.
   */
  private async perform(action: ActionDef, object: StoredRecord, operation: StoredRecord): Promise<Record<string, unknown>> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new Error(`The ${String(operation.action)} did not finish within ${this.timeoutMs} ms.`);
        err.name = 'TimeoutError';
        controller.abort(err);
        reject(err);
      }, this.timeoutMs);
    });
    try {
      const ctx = { now: this.clock().toISOString(), idempotencyKey: operation.id, attempt: Number(operation.attempts), signal: controller.signal };
      // Promise.resolve().then: a perform that throws at once fails like one that rejects.
      return (await Promise.race([Promise.resolve().then(() => action.perform!(object, ctx)), timeout])) ?? {};
    } catch (err) {
      // Past the bound the failure is the bound's, whatever the aborted call threw on its way out (an AbortError).
      throw controller.signal.aborted ? controller.signal.reason : err;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Puts a timed-out operation back for another attempt after a backoff (the bound, doubling per attempt, at most a
   * lease), still processing and still holding its object: the next `perform` gets the same idempotency key.
   * Nothing is written when the claim no longer holds (the row moved on meanwhile).
   */
  private async retryLater(operation: StoredRecord): Promise<void> {
    const attempts = Number(operation.attempts);
    const delay = Math.min(this.leaseMs, this.timeoutMs * 2 ** Math.max(0, attempts - 1));
    const now = this.clock();
    await this.services.commit(async (tx) => {
      const current = await tx.lock(OPERATIONS, operation.id, 'update');
      if (!current || current.status !== 'processing' || current.version !== operation.version) return;
      await bumpOperation(tx, current, { next_attempt_at: new Date(now.getTime() + delay).toISOString() }, now.toISOString());
    });
  }

  private actionOf(operation: StoredRecord): ActionDef | undefined {
    return this.services.model.resources.get(String(operation.resource))?.def.actions?.[String(operation.action)];
  }

  /** Polls every `intervalMs` for due operations, at most `concurrency` performs at once. */
  start(intervalMs = 200): void {
    this.intervalMs = intervalMs;
    this.running = true;
    this.schedule(0);
  }

  /** Looks for due operations at once (a request just queued one in this process). */
  wake(): void {
    if (this.running) this.schedule(0);
  }

  /** Stops polling and waits for the claim and the performs under way (a graceful drain). */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.ticking;
    await Promise.all([...this.inFlight]);
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), delayMs);
    // Polling never keeps the process alive.
    this.timer.unref();
  }

  private tick(): void {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.round().finally(() => {
      this.ticking = undefined;
      if (this.running) this.schedule(this.intervalMs);
    });
  }

  /** Claims for the free slots, again while claims fill them or a wake-up came meanwhile. */
  private async round(): Promise<void> {
    do {
      this.again = false;
      const free = this.concurrency - this.inFlight.size;
      if (free <= 0 || !this.running) return;
      let claimed: ClaimedOperation[];
      try {
        claimed = await this.claim(free);
      } catch (err) {
        this.log.error({ err }, 'claiming operations failed');
        return;
      }
      this.backlog = claimed.length === free;
      for (const c of claimed) {
        const done: Promise<void> = this.execute(c).finally(() => {
          this.inFlight.delete(done);
          if (this.backlog) this.wake();
        });
        this.inFlight.add(done);
      }
      if (this.backlog) this.again = true;
    } while (this.again && this.running);
  }
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && err.name === 'TimeoutError';
}

function messageOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.length > MAX_ERROR_LENGTH ? `${message.slice(0, MAX_ERROR_LENGTH - 1)}…` : message;
}
