// The shapes the resource service's use cases take and answer with, shared by REST, GraphQL and the idempotency layer.
import type { Principal } from '../model/principal.js';
import type { BodyFormat } from '../model/validate.js';
import type { StoredRecord, Tx } from '../store/types.js';
import type { Loaded } from './access.js';

export interface Ctx {
  principal: Principal;
  format?: BodyFormat;
  /** Checks the body as the request's version takes it, before its newest-shape validation (older versions only). */
  checkBody?: (op: 'create' | 'replace' | 'patch', role: string, parent?: ParentRef) => void;
  /**
   * A transaction the change joins instead of opening its own (`commit`'s): changes that must commit together, with
   * the idempotency record of the request that carried them (a keyed GraphQL request's mutations). Its events
   * and queued operations are handed on when that transaction commits.
   */
  joined?: Tx;
  /**
   * When the request arrived (performance.now()): a read the store sent after it (the credentials epoch authentication
   * waited for) may vouch that a record it keeps is current (Store.cachedRecord). Absent: no such shortcut.
   */
  since?: number;
}

export interface Created extends Loaded {
  /** Values shown once in the create response (an API key's secret). */
  reveal: Record<string, unknown>;
}

/** A parent in a nested route: `/users/{id}/orders` → { resource: 'users', id, field: 'user_id' }. */
export interface ParentRef {
  resource: string;
  id: string;
  field: string;
}

/**
 * Work inside the change's own transaction (the idempotency key): `first` runs before the change reads
 * or writes anything, and may end it by throwing (a replay); `last` runs after it, with its result, and
 * commits with it or not at all.
 */
export interface Within<T> {
  first(tx: Tx): Promise<void>;
  last(tx: Tx, result: T): Promise<void>;
}

/** What a POST action answers with: the object, and for an asynchronous action the operation it queued. */
export interface ActionResult extends Loaded {
  /** The `operations` row inserted in the request's transaction (ActionDef.perform); a worker performs it. */
  operation?: StoredRecord;
  /** Values the action shows once and never stores (a rotated webhook secret), as a create's `reveal`. */
  reveal?: Record<string, unknown>;
}

/** An If-Match check, decided inside the transaction against the current object. */
export type Precondition = (loaded: Loaded) => boolean;
