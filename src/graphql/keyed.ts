// The Idempotency-Key of a GraphQL request carrying a mutation (DESIGN §11, issue 29.3): the one adapter between the engine and the services' idempotency records.
//
// The lead switches this file to the services' idempotent use case when it lands (branch h-neutral): `KeyedRun.run` is
// exactly what it takes (a principal, a key, a fingerprint of the request, and a change that hands `within` to its
// transaction), and the engine knows nothing else of idempotency.
import { isAppError } from '../errors/app-error.js';
import type { Principal } from '../model/principal.js';
import { IdempotencyRace, Replay, type Idempotency, type StoredResponse, type Ticket } from '../services/idempotency.js';
import type { Within } from '../services/resource-service.js';
import type { Tx } from '../store/types.js';

/** What a keyed request's fingerprint covers: the operation as run (a persisted query's text, not its hash), its variables and name. */
export interface KeyedRequest {
  query: string;
  variables: Record<string, unknown> | null;
  operationName: string | null;
}

/**
 * One keyed request while it runs. Its one mutation hands `within` to its service, so the key is looked up in the
 * change's own transaction once the caller is authorized, and the whole response, rendered inside that
 * transaction (`render`), is recorded with the change: both commit or neither. A repeat gets that response again.
 */
export class KeyedRun {
  /** The stored response to send instead of running (a repeat of a request whose change committed). */
  replay: StoredResponse | undefined;
  /** The response recorded with the change: what this request answers. */
  stored: StoredResponse | undefined;

  constructor(
    private readonly idempotency: Idempotency,
    private readonly ticket: Ticket,
    private readonly render: (tx: Tx, result: unknown) => Promise<StoredResponse>,
  ) {}

  /**
   * Runs the change under the key; null when a stored response is to be sent instead (`replay`). As REST does
   * (src/http/idempotent.ts): a key another process committed first replays it, and a body refused before its
   * transaction began is 422 IDEMPOTENCY_KEY_REUSED when the key holds another request.
   */
  async run<T>(change: (within: Within<T>) => Promise<T>): Promise<T | null> {
    try {
      return await change({
        first: (tx) => this.ticket.check(tx),
        last: async (tx, result) => {
          this.stored = await this.render(tx, result);
          await this.ticket.record(tx, this.stored);
        },
      });
    } catch (err) {
      if (err instanceof Replay) {
        this.replay = err.response;
        return null;
      }
      if (err instanceof IdempotencyRace) {
        this.replay = await this.idempotency.afterRace(this.ticket);
        return null;
      }
      if (!this.ticket.checked && isAppError(err) && err.code === 'VALIDATION_ERROR') await this.idempotency.refuseReuse(this.ticket);
      throw err;
    }
  }

  /** Ends the request's hold on its key in this process. */
  release(): void {
    this.ticket.release();
  }
}

/**
 * Prepares a keyed run (a malformed key is 400 BAD_REQUEST, thrown, as REST's). The fingerprint is that of a POST
 * to /graphql with the operation as its body: the same operation and variables under the same key replay, anything
 * else under it is IDEMPOTENCY_KEY_REUSED.
 */
export function beginKeyed(
  idempotency: Idempotency,
  principal: Principal,
  key: string,
  request: KeyedRequest,
  render: (tx: Tx, result: unknown) => Promise<StoredResponse>,
): KeyedRun {
  const ticket = idempotency.begin(principal, key, { method: 'POST', url: '/graphql', body: request });
  return new KeyedRun(idempotency, ticket, render);
}
