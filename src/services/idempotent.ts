// Idempotent execution as a use case, whatever the transport (DESIGN §11): replay a stored response, or run the change once and store its response in the change's own transaction.
import { isAppError } from '../errors/app-error.js';
import type { Principal } from '../model/principal.js';
import type { Tx } from '../store/types.js';
import { IdempotencyRace, Replay, type Idempotency, type StoredResponse, type Ticket } from './idempotency.js';
import { KeyedBatch } from './keyed-batch.js';
import type { Within } from './resource-service.js';

/** What identifies a request under its key: the same key sent with other values is 422 IDEMPOTENCY_KEY_REUSED. */
export interface RequestIdentity {
  /** REST: the method; GraphQL: `POST`, however the request arrived. */
  method: string;
  /** REST: the target as sent; GraphQL: its endpoint. */
  url: string;
  /** The parsed body (GraphQL: the operation, its variables and name), fingerprinted canonically: key order does not matter. */
  body: unknown;
}

/**
 * The response of a change's result, made once: the very response stored is the one sent. Under a key it is made
 * inside the change's transaction, which it may read (`tx`: GraphQL renders its whole answer there); without a key
 * there is no such transaction.
 */
export type Render<T> = (result: T, tx: Tx | undefined) => StoredResponse | Promise<StoredResponse>;

/** A request to run under its key, the change itself handed over later (`KeyedRun.run`). */
export interface KeyedRequest<T> {
  key: string;
  /** Keys are scoped to the principal: another caller's key is another key. */
  principal: Principal;
  fingerprint: RequestIdentity;
  render: Render<T>;
}

/** One request, its change included: what a REST POST is. */
export interface IdempotentRequest<T> extends Omit<KeyedRequest<T>, 'key'> {
  /** The client's key (REST: `Idempotency-Key`); undefined runs the change once and records nothing. */
  key: string | undefined;
  /**
   * Performs the change, handing `within` to its one transaction (ResourceService.create, runAction):
   * `within.first` looks the key up once the caller is authorized, `within.last` stores the response.
   */
  run: (within?: Within<T>) => Promise<T>;
}

/** The response to send, and whether it is a stored one sent again (REST: `Idempotent-Replayed: true`). */
export interface IdempotentOutcome {
  response: StoredResponse;
  replayed: boolean;
}

/**
 * One keyed request while it runs. Its change hands `within` to its service, so the key is looked up in the
 * change's own transaction once the caller is authorized, and the response is made and recorded in that
 * transaction: both commit, or neither. A front end that runs the change deep inside its own machinery (a GraphQL
 * resolver, whose errors the engine would swallow) calls `run` there and reads the outcome once it is back.
 */
export class KeyedRun<T> {
  /** The stored response to send instead (a repeat of a request whose change committed). */
  replay: StoredResponse | undefined;
  /** The response recorded with the change: what this request answers. */
  stored: StoredResponse | undefined;

  constructor(
    private readonly keys: Idempotency,
    private readonly ticket: Ticket,
    private readonly render: Render<T>,
  ) {}

  /**
   * Runs the change under the key; null when a stored response is to be sent instead (`replay`). A key another
   * process committed first replays its response (or is 422 for another request); a body refused before the
   * transaction began is 422 IDEMPOTENCY_KEY_REUSED when the key holds another request, else its own error.
   * Nothing is replayed from there: authorization errors (which come first) and anything else keep their answer.
   */
  async run<R extends T>(change: (within: Within<R>) => Promise<R>): Promise<R | null> {
    try {
      return await change({
        first: (tx) => this.ticket.check(tx),
        last: (tx, result) => {
          const made = this.render(result, tx);
          // REST renders synchronously: no promise more per keyed POST than before.
          if (!(made instanceof Promise)) return this.record(tx, made);
          return made.then((response) => this.record(tx, response));
        },
      });
    } catch (err) {
      if (err instanceof Replay) {
        this.replay = err.response;
        return null;
      }
      if (err instanceof IdempotencyRace) {
        this.replay = await this.keys.afterRace(this.ticket);
        return null;
      }
      if (!this.ticket.checked && isAppError(err) && err.code === 'VALIDATION_ERROR') await this.keys.refuseReuse(this.ticket);
      throw err;
    }
  }

  /** What to send once `run` is back: the replay, or the response recorded with the change; undefined when neither happened. */
  outcome(): IdempotentOutcome | undefined {
    if (this.replay) return { response: this.replay, replayed: true };
    return this.stored ? { response: this.stored, replayed: false } : undefined;
  }

  /** Ends the request's hold on its key in this process: always, once the request is answered. */
  release(): void {
    this.ticket.release();
  }

  private record(tx: Tx, response: StoredResponse): Promise<void> {
    this.stored = response;
    return this.ticket.record(tx, response);
  }
}

/**
 * Runs requests under their idempotency keys. A repeat of a finished request is its stored response; a repeat
 * while the first still runs is 409 IDEMPOTENCY_KEY_IN_USE; the key with another request is 422
 * IDEMPOTENCY_KEY_REUSED; an expired record gives way. The transport only maps its own fields (headers) onto a
 * request and sends the outcome, so REST and GraphQL keys behave alike.
 */
export class IdempotentExecution {
  constructor(private readonly keys: Idempotency) {}

  /** Prepares a keyed run: a malformed key is 400 BAD_REQUEST here, before anything runs; nothing is looked up yet. */
  begin<T>(request: KeyedRequest<T>): KeyedRun<T> {
    return new KeyedRun(this.keys, this.keys.begin(request.principal, request.key, request.fingerprint), request.render);
  }

  /** Prepares a keyed request of changes that commit together (src/services/keyed-batch.ts); a malformed key is 400 BAD_REQUEST here. */
  beginBatch(request: Omit<KeyedRequest<unknown>, 'render'>): KeyedBatch {
    return new KeyedBatch(this.keys, this.keys.begin(request.principal, request.key, request.fingerprint));
  }

  /** Runs a whole request (REST's POST): its outcome, the change run at most once per key. */
  async execute<T>(request: IdempotentRequest<T>): Promise<IdempotentOutcome> {
    const { key, run, render } = request;
    if (key === undefined) {
      const made = render(await run(), undefined);
      return { response: made instanceof Promise ? await made : made, replayed: false };
    }
    const keyed = this.begin({ key, principal: request.principal, fingerprint: request.fingerprint, render });
    try {
      await keyed.run(run);
      const outcome = keyed.outcome();
      // A `run` that never handed `within` to its transaction stored nothing: a programming error, not a 500 to hide.
      if (!outcome) throw new Error('an idempotent run must hand `within` to its transaction');
      return outcome;
    } finally {
      keyed.release();
    }
  }
}
