// What every resolver of one request is given: the principal, the use cases, the request's own loaders, and where reads go.
import type { Principal } from '../model/principal.js';
import type { Ctx } from '../services/resource-service.js';
import type { Tx } from '../store/types.js';
import type { EngineServices } from './engine-services.js';
import type { KeyedBatch } from './keyed.js';
import { Loaders } from './loaders.js';

export interface Context {
  principal: Principal;
  /** The services' request context: who acts, and bodies come as JSON. */
  ctx: Ctx;
  deps: EngineServices;
  /** Per request (DataLoader caches are the request's own: nothing one caller read reaches another). */
  loaders: Loaders;
  /**
   * The transaction of a keyed request (src/graphql/keyed.ts): every read goes through it, seeing the request's
   * changes before they commit and taking no other connection meanwhile; undefined otherwise.
   */
  reader: Tx | undefined;
  /** The Idempotency-Key batch of a request carrying mutations under a key: each mutation runs its change through it. */
  batch: KeyedBatch | undefined;
  /** Values worked out once per request (plans parsed from the same arguments). */
  memo: Map<string, unknown>;
  /** A subscription's reconnection: the request's `Last-Event-ID`, which it resumes after (src/graphql/subscriptions.ts). */
  lastEventId?: string;
}

/** `tx` and `batch`: a keyed request's, whose changes join `tx` (Ctx.joined) and commit together. */
export function createContext(deps: EngineServices, principal: Principal, tx?: Tx, batch?: KeyedBatch): Context {
  return {
    principal,
    ctx: tx ? { principal, format: 'json', joined: tx } : { principal, format: 'json' },
    deps,
    loaders: new Loaders(deps, principal, tx),
    reader: tx,
    batch,
    memo: new Map(),
  };
}

export type { EngineServices };
