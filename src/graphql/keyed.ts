// The Idempotency-Key of a GraphQL request carrying mutations (DESIGN §11, issue 29.3): the services' keyed batch (src/services/keyed-batch.ts), fingerprinted as a POST to /graphql.
import type { Principal } from '../model/principal.js';
import type { IdempotentExecution } from '../services/idempotent.js';
import type { KeyedBatch } from '../services/keyed-batch.js';

/** What a keyed request's fingerprint covers: the operation as run (a persisted query's text, not its hash), its variables and name. */
export interface KeyedRequest {
  query: string;
  variables: Record<string, unknown> | null;
  operationName: string | null;
}

export type { KeyedBatch };

/** Prepares a keyed request (a malformed key is 400 BAD_REQUEST, thrown, as REST's): all its mutation fields commit together with its record. */
export function beginKeyed(execution: IdempotentExecution, principal: Principal, key: string, request: KeyedRequest): KeyedBatch {
  return execution.beginBatch({ key, principal, fingerprint: { method: 'POST', url: '/graphql', body: request } });
}
