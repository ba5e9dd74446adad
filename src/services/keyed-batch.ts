// Several changes under one idempotency key (DESIGN §11): they and the key's record commit in one transaction, or nothing does (a keyed GraphQL request's mutation fields).
import { isAppError, type AppError } from '../errors/app-error.js';
import type { Commit, Tx } from '../store/types.js';
import { IdempotencyRace, Replay, type Idempotency, type StoredResponse, type Ticket } from './idempotency.js';
import type { Within } from './resource-service.js';

/** Thrown out of the batch's transaction to roll it back: a change failed, or a stored response is replayed instead. */
const ROLL_BACK = new Error('the keyed batch rolls back');

/**
 * One keyed request whose changes run one after another in a single transaction (`run`): each change joins it
 * (Ctx.joined) and hands `within` (via `change`) to its service, so the key is looked up once, in that
 * transaction, when the first change has been authorized (a replay reaches only a caller that may make it
 * now, as on REST); the response is recorded in the same transaction once all of them succeeded. A crash
 * or a failed change leaves nothing of the request applied and no record: the request can be sent again.
 */
export class KeyedBatch {
  /** The stored response to send instead (a repeat of a request that committed). */
  replay: StoredResponse | undefined;
  /** The response recorded with the changes: what this request answers. */
  stored: StoredResponse | undefined;
  /** The transaction the key was looked up in (once per attempt: a retried transaction looks again). */
  private checkedIn: Tx | undefined;
  /** A change's body was refused before the key was looked up: after the rollback, the key's record decides between its error and 422. */
  private invalidBeforeCheck = false;
  /**
   * The key itself refused the request (IDEMPOTENCY_KEY_IN_USE: running still; IDEMPOTENCY_KEY_REUSED: it holds
   * another request): thrown by `run` once rolled back, a refusal of the whole request as REST's 409 and 422.
   */
  private keyRefusal: AppError | undefined;
  /** A change showed a secret once (a new API key): the record is sealed (StoredResponse.sensitive). */
  private sensitive = false;

  constructor(
    private readonly keys: Idempotency,
    private readonly ticket: Ticket,
  ) {}

  /**
   * Runs one change of the batch inside the transaction of `run`; null when a stored response is to be sent
   * instead (`replay`). Its errors are thrown on as they are: the caller fails the request, and `run` rolls back.
   */
  async change<R>(perform: (within: Within<R>) => Promise<R>): Promise<R | null> {
    if (this.replay) return null;
    try {
      const result = await perform({
        first: (tx) => {
          if (this.checkedIn === tx) return Promise.resolve();
          this.checkedIn = tx;
          return this.ticket.check(tx);
        },
        // The record is written once, by `run`, after the last change.
        last: () => Promise.resolve(),
      });
      const reveal = (result as { reveal?: Record<string, unknown> } | null)?.reveal;
      if (reveal && Object.keys(reveal).length > 0) this.sensitive = true;
      return result;
    } catch (err) {
      if (err instanceof Replay) {
        this.replay = err.response;
        return null;
      }
      if (isAppError(err)) {
        if (err.code === 'IDEMPOTENCY_KEY_IN_USE' || err.code === 'IDEMPOTENCY_KEY_REUSED') this.keyRefusal = err;
        else if (!this.ticket.checked && err.code === 'VALIDATION_ERROR') this.invalidBeforeCheck = true;
      }
      throw err;
    }
  }

  /**
   * Runs `work` (the request, calling `change` for each change) in one transaction of `commit`, joined by every
   * change. `work` answers with the response to record, or undefined when the request failed: then everything
   * rolls back and nothing is recorded. Afterwards `replay` or `stored` says what to send; neither, when the
   * request failed (send its own answer). Throws what the key refused (409 IDEMPOTENCY_KEY_IN_USE, 422
   * IDEMPOTENCY_KEY_REUSED), and 422 for a body refused before the lookup while the key holds another request, as REST does.
   */
  async run(commit: Commit, work: (tx: Tx) => Promise<StoredResponse | undefined>): Promise<void> {
    try {
      await commit(async (tx) => {
        // A retried transaction starts over.
        this.replay = this.stored = this.checkedIn = this.keyRefusal = undefined;
        this.invalidBeforeCheck = this.sensitive = false;
        const response = await work(tx);
        if (this.replay || !response) throw ROLL_BACK;
        const recorded = this.sensitive ? { ...response, sensitive: true } : response;
        await this.ticket.record(tx, recorded);
        this.stored = recorded;
      });
    } catch (err) {
      if (err === ROLL_BACK) {
        this.stored = undefined;
        if (this.keyRefusal) throw this.keyRefusal;
        if (this.invalidBeforeCheck) await this.keys.refuseReuse(this.ticket);
        return;
      }
      this.stored = undefined;
      // Another process committed this key first (PostgreSQL): its record decides (replay, or 422 for another request).
      if (err instanceof IdempotencyRace) {
        this.replay = await this.keys.afterRace(this.ticket);
        return;
      }
      throw err;
    }
  }

  /** Ends the request's hold on its key in this process: always, once the request is answered. */
  release(): void {
    this.ticket.release();
  }
}
