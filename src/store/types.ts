// The store contract: what every persistence adapter (SQLite now, PostgreSQL later) provides to the services.
import type { CompiledModel } from '../model/compile.js';

/** A stored object: system fields plus the model's fields, as domain values (money as {amount, currency}). */
export interface StoredRecord {
  id: string;
  version: number;
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}

export type ConditionOp = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in';

/** A condition on a query path (`status`, `price.amount`); values are already typed by the query layer. */
export type Condition =
  | { path: string; op: ConditionOp; value: unknown }
  /** The object belongs to `value` through a parent: `order_id IN (SELECT id FROM orders WHERE user_id = value)`. */
  | { path: string; op: 'owned_via'; parent: string; parentField: string; value: string };

export interface SortKey {
  path: string;
  desc: boolean;
}

export interface ListQuery {
  where: Condition[];
  /** Free text matched against the resource's searchable fields; enables the `_rank` sort path (best first ascending). */
  search?: string;
  /**
   * Always ends with `id`, so the order is total and keyset pages are stable. Nulls sort first
   * ascending and last descending, in every adapter.
   */
  orderBy: SortKey[];
  limit: number;
  /** Keyset position: the sort values of the last row already seen, in `orderBy` order. */
  after?: unknown[];
  offset?: number;
  withTotal?: boolean;
}

export interface ListResult {
  rows: StoredRecord[];
  /** With a search: each row's rank (lower is better), parallel to `rows`. */
  ranks?: number[];
  total?: number;
}

export interface EventRecord {
  id: string;
  type: string;
  resource: string;
  object_id: string;
  /** The user the object belongs to, for later filtering of the event stream. */
  owner_id: string | null;
  api_version: string;
  created_at: string;
  data: Record<string, unknown>;
  previous_attributes?: Record<string, unknown> | undefined;
}

export interface StoredEvent extends EventRecord {
  sequence: number;
}

/** Raised by adapters when a unique constraint rejects a write; services map it to 409. */
export class UniqueViolation extends Error {
  constructor(readonly resource: string, readonly field: string) {
    super(`unique violation on ${resource}.${field}`);
    this.name = 'UniqueViolation';
  }
}

/** Reads that see only committed data. */
export interface Reader {
  get(resource: string, id: string): Promise<StoredRecord | null>;
  findOne(resource: string, where: Condition[]): Promise<StoredRecord | null>;
  list(resource: string, query: ListQuery): Promise<ListResult>;
  listEvents(afterSequence: number, limit: number): Promise<StoredEvent[]>;
}

/** A transaction: reads see its own writes; everything commits or nothing does. */
export interface Tx extends Reader {
  insert(resource: string, record: StoredRecord): Promise<void>;
  /** Writes the whole record; the adapter bumps nothing itself, the service sets version and updated_at. */
  update(resource: string, record: StoredRecord): Promise<void>;
  delete(resource: string, id: string): Promise<boolean>;
  appendEvent(event: EventRecord): Promise<StoredEvent>;
}

export interface StoreCapabilities {
  /** Ranked full-text search over searchable fields. */
  fullTextSearch: boolean;
}

export interface Store extends Reader {
  readonly capabilities: StoreCapabilities;
  /** Creates tables, indexes and unique constraints from the model and applies additive changes. */
  migrate(model: CompiledModel): Promise<void>;
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** True when the store answers; used by /readyz. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
