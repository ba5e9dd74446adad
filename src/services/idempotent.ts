// Idempotent execution as a use case, whatever the transport (DESIGN §11): replay a stored response, or run the change once and store its response in the change's own transaction.
import { isAppError } from '../errors/app-error.js';
import type { Principal } from '../model/principal.js';
import { IdempotencyRace, Replay, type Idempotency, type StoredResponse } from './idempotency.js';
import type { Within } from './resource-service.js';

/** What identifies a request under its key: the same key sent with other values is 422 IDEMPOTENCY_KEY_REUSED. */
export interface RequestIdentity {
  /** REST: the method; a GraphQL request: `POST` as well, however it arrived. */
  method: string;
  /** REST: the target as sent; GraphQL: its endpoint. */
  url: string;
  /** The parsed body, fingerprinted canonically (key order does not matter). */
  body: unknown;
}

/** One request to run at most once per key. */
export interface IdempotentRequest<T> {
  /** The client's key (REST: `Idempotency-Key`); undefined runs the change once and records nothing. */
  key: string | undefined;
  /** Keys are scoped to the principal: another caller's key is another key. */
  principal: Principal;
  fingerprint: RequestIdentity;
  /**
   * Performs the change, handing `within` to its one transaction (ResourceService.create, runAction):
   * `within.first` looks the key up once the caller is authorized, `within.last` stores the response.
   */
  run: (within?: Within<T>) => Promise<T>;
  /** The response of a result, made once: the very response stored is the one returned. */
  render: (result: T) => StoredResponse;
}

/** The response to send, and whether it is a stored one sent again (REST: `Idempotent-Replayed: true`). */
export interface IdempotentOutcome {
  response: StoredResponse;
  replayed: boolean;
}

/**
 * Runs requests under their idempotency keys. A repeat of a finished request is its stored response; a repeat
 * while the first still runs is 409 IDEMPOTENCY_KEY_IN_USE; the key with another request is 422
 * IDEMPOTENCY_KEY_REUSED; an expired record gives way. The transport only maps its own fields (headers) to a
 * request and renders the outcome, so REST and GraphQL keys behave alike.
 */
export class IdempotentExecution {
  constructor(private readonly keys: Idempotency) {}

  async execute<T>(request: IdempotentRequest<T>): Promise<IdempotentOutcome> {
    const { key, run, render } = request;
    if (key === undefined) return { response: render(await run()), replayed: false };
    const ticket = this.keys.begin(request.principal, key, request.fingerprint);
    try {
      let rendered: StoredResponse | undefined;
      await run({
        first: (tx) => ticket.check(tx),
        last: (tx, result) => {
          rendered = render(result);
          return ticket.record(tx, rendered);
        },
      });
      // A `run` that never handed `within` to its transaction would store nothing: a programming error, not a 500 to hide.
      if (rendered === undefined) throw new Error('an idempotent run must hand `within` to its transaction');
      return { response: rendered, replayed: false };
    } catch (err) {
      if (err instanceof Replay) return { response: err.response, replayed: true };
      // Another process committed this key first: its response is the answer (or 422 for a different request).
      if (err instanceof IdempotencyRace) return { response: await this.keys.afterRace(ticket), replayed: true };
      // A body refused before the transaction began: a key used for another request is still 422 REUSED.
      // Nothing is replayed from here: authorization errors (which come first) and anything else keep their answer.
      if (!ticket.checked && isAppError(err) && err.code === 'VALIDATION_ERROR') await this.keys.refuseReuse(ticket);
      throw err;
    } finally {
      ticket.release();
    }
  }
}
