// The store contract: what every persistence adapter (SQLite, PostgreSQL) provides to the services.
import type { CompiledModel } from '../model/compile.js';

// Records and the conditions on them are the model's vocabulary (src/model/records.ts); the store speaks it.
import type { Condition, SortKey, StoredRecord } from '../model/records.js';
export type { Condition, ConditionOp, SortKey, StoredRecord } from '../model/records.js';

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
  /**
   * Inside a transaction: hold the rows returned for update and pass over rows another transaction holds
   * (PostgreSQL `FOR UPDATE SKIP LOCKED`), so concurrent workers claim disjoint rows of a queue. SQLite has
   * one writer at a time, so its transactions never meet a held row and the option changes nothing there.
   */
  skipLocked?: boolean;
  /**
   * The caller only reads the result, never changes it: a store may hand the same frozen rows to every such
   * caller until its data changes (SQLite keeps such pages until the next commit: src/store/list-cache.ts).
   */
  shared?: boolean;
  /**
   * When the request arrived (performance.now(); Ctx.since), for a shared read: a store whose kept pages are
   * validated by a read (PostgreSQL's snapshot) may take one sent after this moment instead of sending another.
   */
  since?: number;
}

export interface ListResult {
  rows: StoredRecord[];
  /** With a search: each row's rank (lower is better), parallel to `rows`. */
  ranks?: number[];
  total?: number;
}

/**
 * The first rows of many groups at once (Reader.listGroups): the children of many parents, each parent's own
 * first `limit` in `orderBy` order, in one statement (a batch loader's N parents are not N queries).
 */
export interface GroupQuery {
  /** The field rows are grouped by (a parent's foreign key), and the groups wanted: at most 1000 values. */
  field: string;
  values: readonly unknown[];
  /** Further conditions every row must meet (filters, the caller's ownership). */
  where: Condition[];
  /** The order within each group; ends with `id`, so it is total. */
  orderBy: SortKey[];
  /** Rows per group, at most. */
  limit: number;
}

/** One group of a GroupQuery: its first rows, and how many rows it has in all. */
export interface Group {
  rows: StoredRecord[];
  total: number;
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
  /**
   * The log's position, one counter per store, strictly increasing in commit order (DESIGN §9): a reader
   * that has seen N never later finds a committed event below N. On PostgreSQL it is stamped after commit
   * (src/store/postgres/event-sequencer.ts); until then an event is not listed.
   */
  sequence: number;
}

/** Which events a reader may see and asked for; every part is optional and they combine with AND. */
export interface EventFilter {
  /** Only events of objects this user owns (null: events of objects nobody owns). */
  ownerId?: string | null;
  /** Only events of these resources (an empty list passes none). */
  resources?: readonly string[];
  /** Type patterns, `*` matching any characters (`order.*`); any one passes. */
  types?: readonly string[];
}

/** Raised by adapters when a unique constraint rejects a write; services map it to 409. */
export class UniqueViolation extends Error {
  constructor(
    readonly resource: string,
    readonly field: string,
  ) {
    super(`unique violation on ${resource}.${field}`);
    this.name = 'UniqueViolation';
  }
}

/**
 * Raised when a transaction kept losing to concurrent ones (deadlocks, serialization failures) through every
 * retry: the work is sound, the moment is not. Clients get 503 with Retry-After, never 500.
 */
export class StoreBusy extends Error {
  constructor(
    readonly attempts: number,
    override readonly cause: unknown,
  ) {
    super(`the transaction lost to concurrent ones ${attempts} times`);
    this.name = 'StoreBusy';
  }
}

/**
 * How a transaction holds a row it read until it ends (PostgreSQL row locks; SQLite has one writer, so
 * every write transaction holds everything already):
 * - `update`: it will change the row (FOR NO KEY UPDATE): other changes of the row wait, references do not;
 * - `delete`: it may delete the row (FOR UPDATE): also new references to it wait, and then find it gone;
 * - `reference`: a new row will name it (FOR KEY SHARE): it cannot be deleted under the reference.
 */
export type LockMode = 'update' | 'delete' | 'reference';

/**
 * The stored response of a POST sent with an Idempotency-Key (DESIGN §11). Kept in a table of its own,
 * not as a resource: two B-trees (the append-ordered rows and the key index) are all a keyed POST adds
 * to its commit, and purging walks the rows in insertion order.
 */
export interface IdempotencyRecord {
  /** Digest of the principal's scope and the key: unique. */
  scopeKey: string;
  /** Digest of the request (method, path, canonical body). */
  fingerprint: string;
  /** The response as the idempotency service serialised it (plain, or sealed). */
  response: string;
  /** Unix time in milliseconds from which the record is no longer replayed. */
  expiresAt: number;
}

/**
 * Reads that see only committed data. A record the store itself returns from `get` is deep-frozen on every
 * adapter (SQLite may hand the same object to many callers from its read cache); records read inside a
 * transaction, and rows of lists, are the caller's own.
 */
export interface Reader {
  get(resource: string, id: string): Promise<StoredRecord | null>;
  /** Batch read (loaders): the records with these ids that exist, in the order of `ids`, each once; malformed ids find nothing. */
  getMany(resource: string, ids: readonly string[]): Promise<StoredRecord[]>;
  findOne(resource: string, where: Condition[]): Promise<StoredRecord | null>;
  list(resource: string, query: ListQuery): Promise<ListResult>;
  /** The groups of `query` that have rows, by the group's value as text (a group without rows is absent). */
  listGroups(resource: string, query: GroupQuery): Promise<Map<string, Group>>;
  /** The sequenced events after `afterSequence` that pass `filter`, in sequence order. */
  listEvents(afterSequence: number, limit: number, filter?: EventFilter): Promise<StoredEvent[]>;
  /** One sequenced event by id, or null (never written, purged, or on PostgreSQL not stamped yet). */
  findEvent(id: string): Promise<StoredEvent | null>;
  /**
   * The highest sequence stamped so far (0 for an empty log): the head a new stream starts from. On the store
   * (outside a transaction) every event whose write was acknowledged before the call is at or below it.
   */
  lastEventSequence(): Promise<number>;
  /** The record stored under `scopeKey`, live or expired. */
  findIdempotency(scopeKey: string): Promise<IdempotencyRecord | null>;
}

/** A transaction: reads see its own writes; everything commits or nothing does. */
export interface Tx extends Reader {
  /** Reads a record and holds it in `mode` until the transaction ends; null when there is none. */
  lock(resource: string, id: string, mode: LockMode): Promise<StoredRecord | null>;
  /** SUM over the matching rows of the product of the numeric query paths `factors` (integers, exact); 0 for none. */
  sum(resource: string, where: Condition[], factors: string[]): Promise<number>;
  insert(resource: string, record: StoredRecord): Promise<void>;
  /** Writes the whole record; the adapter bumps nothing itself, the service sets version and updated_at. */
  update(resource: string, record: StoredRecord): Promise<void>;
  /** As `insert` for each record, in as few statements as the adapter can (a worker's batch of deliveries). */
  insertMany(resource: string, records: readonly StoredRecord[]): Promise<void>;
  /** As `update` for each record (each must exist), in as few statements as the adapter can. */
  updateMany(resource: string, records: readonly StoredRecord[]): Promise<void>;
  delete(resource: string, id: string): Promise<boolean>;
  /** Adds an event to the log, committed with the transaction; its sequence is the store's to give (see StoredEvent). */
  appendEvent(event: EventRecord): Promise<void>;
  /** Stores a record; UniqueViolation (resource `idempotency`, field `scope_key`) when the key has one already. */
  insertIdempotency(record: IdempotencyRecord): Promise<void>;
  /** Removes the record under `scopeKey` if it expired at or before `now` (Unix ms); true when one went. */
  deleteExpiredIdempotency(scopeKey: string, now: number): Promise<boolean>;
  /** Moves the credentials epoch when this transaction commits: every process's cached credentials are void from then on. */
  bumpCredentialEpoch(): Promise<void>;
}

/** Runs `fn` in one transaction and commits it: the store's own, or the services' (which publish its events after the commit). */
export type Commit = <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>;

export interface StoreCapabilities {
  /** Ranked full-text search over searchable fields. */
  fullTextSearch: boolean;
  /**
   * The store itself tells every process when events become readable (`watchEvents`: PostgreSQL's stamper
   * NOTIFYs once it has sequenced them); a wake-up sent at commit would come before they are readable.
   */
  announcesEvents: boolean;
}

export interface Store extends Reader {
  readonly capabilities: StoreCapabilities;
  /** Creates tables, indexes and unique constraints from the model and applies additive changes. */
  migrate(model: CompiledModel): Promise<void>;
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Deletes expired idempotency records, oldest stored first, at most `batch`, stopping at the first live
   * one (with one lifetime for all keys, insertion order is expiry order); returns how many went.
   */
  purgeIdempotency(now: number, batch: number): Promise<number>;
  /**
   * Gives the committed events that have none their sequence, in commit order, and returns how many it
   * stamped. PostgreSQL allocates identities at insert, not at commit, so its sequence is stamped here,
   * after commit, by one stamper at a time; a writer's process calls it after its commit and a sweep
   * catches events whose writer died in between. SQLite numbers events under its single writer: nothing to do.
   */
  sequenceEvents(): Promise<number>;
  /**
   * Deletes at most `batch` events created before `before` (ISO 8601), oldest first, and with `through` only
   * those whose sequence is at most `through`; returns how many went.
   */
  purgeEvents(before: string, batch: number, through?: number): Promise<number>;
  /**
   * Calls `listener` whenever another process of the deployment may have sequenced events (PostgreSQL
   * LISTEN/NOTIFY); returns the way to stop. A hint only: readers also poll. SQLite has no such channel.
   */
  watchEvents(listener: () => void): () => void;
  /**
   * The credentials epoch: it moves whenever a committed transaction changed a credential, in this process
   * or any other using the same database. Cached credentials are valid only at the epoch they were read at.
   * Strict: the answer reflects every such commit made before the call (issue 12.4, "from the next request
   * on"). Answered from memory when the adapter knows nothing can have changed (a number), else by a read.
   */
  credentialEpoch(): number | Promise<number>;
  /**
   * The epoch `credentialEpoch` would answer, when the adapter can tell it without waiting; undefined when only a
   * read can (then nothing is read: a hot path that would only use a known epoch asks this, not credentialEpoch,
   * which on PostgreSQL sends a read whatever becomes of its answer). Adapters whose epoch is always read omit it.
   */
  credentialEpochNow?(): number | undefined;
  /**
   * The record `get` would answer, when the adapter holds it in memory and nothing has changed since it was read
   * (the same validity as `get`'s cache); undefined when only `get` can tell (not held, or a transaction must end
   * first). Lets a hot read finish without a promise (src/http/transport/fast-reads.ts). Adapters without a read cache omit it.
   * `since`: when the request arrived (performance.now()). An adapter whose cache is validated by a read (PostgreSQL)
   * answers only when such a read was sent after that moment, and never without `since`.
   */
  cachedRecord?(resource: string, id: string, since?: number): StoredRecord | undefined;
  /**
   * A stamp of everything reads can see: two equal stamps, read at two moments, mean no commit in any process
   * changed the data between them, so an answer computed from reads between two equal stamps may be given
   * again while the stamp reads the same (src/graphql/answer-cache.ts). Answered from memory when the adapter
   * can (a number), else by a read; undefined when it cannot be told now. Adapters that cannot tell omit it.
   * `since`: when the request arrived (performance.now()); an adapter that reads its stamp (PostgreSQL) may answer
   * with a read sent after that moment (the one authentication waited for) instead of sending another.
   */
  readStamp?(since?: number): number | string | Promise<string> | undefined;
  /**
   * The value named `key` that every process of the deployment shares: `candidate` if none was stored yet
   * (then stored), else the stored one. Used for the generated development secret.
   */
  metaValue(key: string, candidate: string): Promise<string>;
  /** True when the store answers; used by /readyz. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
