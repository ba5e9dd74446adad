// The Idempotency-Key of a GraphQL request carrying a mutation (DESIGN §11, issue 29.3): the services' idempotent use case (src/services/idempotent.ts), fingerprinted as a POST to /graphql.
import type { Principal } from '../model/principal.js';
import type { StoredResponse } from '../services/idempotency.js';
import type { IdempotentExecution, KeyedRun as ServiceKeyedRun } from '../services/idempotent.js';
import type { Tx } from '../store/types.js';

/** What a keyed request's fingerprint covers: the operation as run (a persisted query's text, not its hash), its variables and name. */
export interface KeyedRequest {
  query: string;
  variables: Record<string, unknown> | null;
  operationName: string | null;
}

/** One keyed request while it runs: its one mutation's resolver runs the change through it. */
export type KeyedRun = ServiceKeyedRun<unknown>;

/** Prepares a keyed run (a malformed key is 400 BAD_REQUEST, thrown, as REST's); `render` makes the whole answer inside the change's transaction. */
export function beginKeyed(
  execution: IdempotentExecution,
  principal: Principal,
  key: string,
  request: KeyedRequest,
  render: (tx: Tx, result: unknown) => Promise<StoredResponse>,
): KeyedRun {
  return execution.begin<unknown>({ key, principal, fingerprint: { method: 'POST', url: '/graphql', body: request }, render: (result, tx) => render(tx!, result) });
}
