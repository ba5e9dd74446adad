// The PostgreSQL store (`pg`, pooled): serializable transactions retried on conflict, migrations under an advisory lock.
import pg from 'pg';
import type { CompiledModel, CompiledResource } from '../../model/compile.js';
import { quote } from '../sql/queries.js';
import {
  StoreBusy,
  type Condition,
  type EventFilter,
  type Group,
  type GroupQuery,
  type IdempotencyRecord,
  type ListQuery,
  type ListResult,
  type Store,
  type StoredEvent,
  type StoredRecord,
  type Tx,
} from '../types.js';
import { PURGE_IDEMPOTENCY, idempotencyTable } from '../sql/idempotency.js';
import { EVENTS_TABLE, SEARCH_COLUMN, createTable, indexes, pgType } from './ddl.js';
import { INSERT_META_IF_ABSENT, META_TABLE, READ_META, READ_META_PREFIXED, WRITE_META } from '../sql/meta.js';
import { Statements } from './statements.js';
import { ListCache } from '../list-cache.js';
import { RecordCache, recordKey, type Carries } from '../record-cache.js';
import { KeptListRows, LIST_ROWS_AFTER_MS } from '../kept-list-rows.js';
import { numbered } from './dialect.js';
import { EpochReader, READ_EPOCH_AND_SNAPSHOT } from './epoch-reader.js';
import { PgOps } from './pg-ops.js';
import { ChannelListener } from './channel-listener.js';
import { EVENTS_CHANNEL, EventSequencer, SEQUENCER_DDL } from './event-sequencer.js';
import { PipelinedTx } from './pipelined-tx.js';
import { OwnTransactions } from './own-transactions.js';
import { RowWrites, TxWrites } from './row-writes.js';
import { purgeEventsSql } from '../sql/events.js';
import { deepFreeze } from '../../lib/deep-freeze.js';
import { backoffMs, MAX_ATTEMPTS, retryable } from './retry-policy.js';
import { COUNTS_TABLE, migrateCounts } from './row-counts.js';
import { META_PREFIX, metaKey } from '../sql/count-keys.js';
import { CREDENTIAL_EPOCH_TABLE, SEED_CREDENTIAL_EPOCH } from '../sql/credential-epoch.js';

/** Every Canon process takes this advisory lock to migrate, so several can start at once. */
const MIGRATION_LOCK = 0x63616e6f; // "cano"

const INT8 = 20;
const TIMESTAMPTZ = 1184;

/**
 * timestamptz as sent by a session in UTC (`2026-11-21 20:58:09.328+00`) → ISO 8601 with
 * milliseconds, directly: building a Date per value and formatting it again cost 14% of a list.
 */
export function isoFromPg(text: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(\.\d+)?\+00$/.exec(text);
  if (!m) return new Date(text).toISOString();
  return `${m[1]}T${m[2]}${(m[3] ?? '.000').padEnd(4, '0').slice(0, 4)}Z`;
}

// int8 (counts, amounts, sequences) as numbers: every value Canon stores is within Number.MAX_SAFE_INTEGER.
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8 ? (v: string) => Number(v) : oid === TIMESTAMPTZ ? isoFromPg : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export interface PgOptions {
  connectionString: string;
  /** Pool size per process. */
  max?: number;
  /** Name the most used statements, prepared once per connection (default true; src/store/postgres/statements.ts). */
  preparedStatements?: boolean;
  /** Keep small pages and offset counts until the next commit (default true; src/store/list-cache.ts). */
  listCache?: boolean;
  /** How long the snapshot must have held before shared lists keep their rows (default LIST_ROWS_AFTER_MS; tests set 0). */
  listRowsAfterMs?: number;
}

export class PgStore implements Store {
  readonly capabilities = { fullTextSearch: true, announcesEvents: true };
  private readonly pool: pg.Pool;
  private model: CompiledModel | undefined;
  private readonly reads: PgOps;
  private readonly epoch: EpochReader;
  private readonly sequencer: EventSequencer;
  private readonly eventsChannel: ChannelListener;
  private readonly statements: Statements;
  /** Undefined when switched off (CANON_LIST_CACHE=off): every list is read, and no snapshot is asked for. */
  private readonly pages: ListCache | undefined;
  /** This process's transactions, by id: a snapshot moved by those alone keeps the records and rows kept (OwnTransactions). */
  private readonly own = new OwnTransactions();
  /** The rows those are writing and have written: a record read meanwhile is not kept (see get). */
  private readonly rowWrites = new RowWrites();
  /** Records read by id, kept under the snapshot of the epoch read before them (see get, cachedRecord). */
  private readonly records: RecordCache;
  /** The rows shared lists read (see listRowsAt). */
  private readonly listRows: KeptListRows;

  constructor(options: PgOptions) {
    this.statements = new Statements(options.preparedStatements ?? true);
    this.pages = options.listCache === false ? undefined : new ListCache();
    const carries: Carries = (from, to) => typeof from === 'string' && typeof to === 'string' && this.own.carries(from, to);
    this.records = new RecordCache(10_000, carries);
    this.listRows = new KeptListRows(options.listRowsAfterMs ?? LIST_ROWS_AFTER_MS, new RecordCache(10_000, carries), carries);
    // Sessions run in UTC so timestamps arrive as `…+00`, the form isoFromPg reads without a Date.
    const connection = { connectionString: options.connectionString, types, options: '-c TimeZone=UTC' };
    // Pipeline mode: a transaction's BEGIN and its event go out with other statements (src/store/postgres/pipelined-tx.ts).
    this.pool = new pg.Pool({ ...connection, max: options.max ?? 10, pipeline: true });
    // An idle client's error (the server restarted) must not crash the process; the next query reconnects.
    this.pool.on('error', () => undefined);
    this.reads = new PgOps(this.pool, () => this.requireModel(), this.statements, true);
    this.epoch = new EpochReader(() => new pg.Client(connection), this.pool, this.statements.of(READ_EPOCH_AND_SNAPSHOT));
    this.sequencer = new EventSequencer(this.pool, (xid) => this.own.own(xid));
    this.eventsChannel = new ChannelListener(EVENTS_CHANNEL, () => new pg.Client(connection));
  }

  sequenceEvents(): Promise<number> {
    return this.sequencer.run();
  }

  watchEvents(listener: () => void): () => void {
    return this.eventsChannel.add(listener);
  }

  /** By insertion position: old rows are all stamped (the sweep runs every second), and it is the primary key. */
  async purgeEvents(before: string, batch: number, through?: number): Promise<number> {
    if (through === undefined) return (await this.pool.query(numbered(purgeEventsSql('sequence')), [before, batch])).rowCount ?? 0;
    return (await this.pool.query(numbered(purgeEventsSql('sequence', 'commit_sequence')), [before, through, batch])).rowCount ?? 0;
  }

  findEvent(id: string): Promise<StoredEvent | null> {
    return this.reads.findEvent(id);
  }

  /**
   * The head a stream opened now starts from: every event whose write was acknowledged before the call is at or
   * below it (DESIGN §9, issue 26.6). A write is acknowledged once committed, and its event is numbered just
   * after, off the request path: the committed events still unnumbered are numbered first (one round trip when
   * there are none), else a stream opened right after a 201 would later receive that write's event as new.
   */
  async lastEventSequence(): Promise<number> {
    await this.sequencer.run();
    return this.reads.lastEventSequence();
  }

  credentialEpoch(): Promise<number> {
    return this.epoch.current();
  }

  /** The database's snapshot, read after the call (src/store/postgres/epoch-reader.ts), as the list cache's stamp. */
  readStamp(since?: number): string | Promise<string> {
    // A read sent after the request arrived sees every commit made before it, as a new one would (see cachedRecord).
    const known = since === undefined ? undefined : this.epoch.readSince(since);
    return known?.snapshot ?? this.epoch.snapshot();
  }

  private requireModel(): CompiledModel {
    if (!this.model) throw new Error('store used before migrate()');
    return this.model;
  }

  async migrate(model: CompiledModel): Promise<void> {
    this.model = model;
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      await client.query(META_TABLE);
      await client.query(COUNTS_TABLE);
      await client.query(EVENTS_TABLE);
      for (const statement of SEQUENCER_DDL) await client.query(statement);
      await client.query(idempotencyTable('seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY', true));
      await client.query(CREDENTIAL_EPOCH_TABLE);
      await client.query(SEED_CREDENTIAL_EPOCH);
      // The counts' signatures of every table, in one round trip rather than one per table.
      const counted = new Map(((await client.query(numbered(READ_META_PREFIXED), [META_PREFIX])).rows as Array<{ key: string; value: string }>).map((m) => [m.key, m.value]));
      for (const r of model.resources.values()) {
        await client.query(createTable(r));
        // Additive changes only: new columns are added; nothing is dropped or retyped on start.
        for (const c of r.columns) await client.query(`ALTER TABLE ${quote(r.table)} ADD COLUMN IF NOT EXISTS ${quote(c.name)} ${pgType(c)}`);
        if (r.searchable.length) await client.query(`ALTER TABLE ${quote(r.table)} ADD COLUMN IF NOT EXISTS ${SEARCH_COLUMN} tsvector`);
        for (const ix of indexes(r)) await client.query(ix);
        await this.migrateSearch(client, r);
        await migrateCounts(client, r, counted.get(metaKey(r)));
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
      client.release();
    }
  }

  /** Recomputes every row's search document when the searchable fields changed since the last start. */
  private async migrateSearch(client: pg.PoolClient, r: CompiledResource): Promise<void> {
    if (!r.searchable.length) return;
    const key = `search:${r.table}`;
    const wanted = r.searchable.join(',');
    const current = (await client.query(numbered(READ_META), [key])).rows[0]?.value as string | undefined;
    if (current === wanted) return;
    const ops = new PgOps(client, () => this.requireModel(), this.statements);
    let after = '00000000-0000-0000-0000-000000000000';
    for (let batch = 0; batch < 1_000_000; batch++) {
      const { rows } = await ops.list(r.name, { where: [{ path: 'id', op: 'gt', value: after }], orderBy: [{ path: 'id', desc: false }], limit: 500 });
      for (const record of rows) await ops.update(r.name, record);
      if (rows.length < 500) break;
      after = rows[rows.length - 1]!.id;
    }
    await client.query(numbered(WRITE_META), [key, wanted]);
  }

  /** Atomic without the migration lock: of processes inserting at once, one row wins and all read it. */
  async metaValue(key: string, candidate: string): Promise<string> {
    await this.pool.query(numbered(INSERT_META_IF_ABSENT), [key, candidate]);
    return String((await this.pool.query(numbered(READ_META), [key])).rows[0]!.value);
  }

  /** Frozen, as the SQLite adapter's are (Reader): callers behave the same on both stores. */
  async get(resource: string, id: string): Promise<StoredRecord | null> {
    const before = this.epoch.latest;
    const sent = this.rowWrites.now();
    const record = deepFreeze(await this.reads.get(resource, id));
    // Read after the last epoch read answered, so the record shows at least every commit its snapshot shows (perhaps
    // later ones too, which a request stamped with that snapshot arrived before, so may see). Kept under the last
    // snapshot read now, if that is the same one or only our transactions ended since (stillAt), and none of those
    // wrote the row since the read was sent or is writing it now (RowWrites): its read may predate their commit.
    const at = before === undefined ? undefined : this.stillAt(before.snapshot);
    if (record !== null && at !== undefined && this.rowWrites.keepable(recordKey(resource, id), sent)) {
      this.records.validate(at);
      this.records.set(resource, id, record);
    }
    return record;
  }

  /**
   * The last snapshot read, when what was read after snapshot `from` answered is still current under it: it is `from`,
   * or every transaction that ended since was ours (OwnTransactions), whose rows the caches forget. Undefined
   * otherwise: a commit we did not make, or no snapshot read yet.
   */
  private stillAt(from: string): string | undefined {
    const latest = this.epoch.latest?.snapshot;
    return latest !== undefined && (latest === from || this.own.carries(from, latest)) ? latest : undefined;
  }

  /**
   * The record as of a request that arrived at `since` (performance.now()), from memory, when an epoch read was
   * sent after that moment (the one authentication waited for) and the record was kept under its snapshot:
   * nothing committed since the record was read. Undefined otherwise (then `get` reads it).
   */
  cachedRecord(resource: string, id: string, since?: number): StoredRecord | undefined {
    if (since === undefined) return undefined;
    const read = this.epoch.readSince(since);
    if (read === undefined) return undefined;
    this.records.validate(read.snapshot);
    return this.records.get(resource, id);
  }

  findOne(resource: string, where: Condition[]): Promise<StoredRecord | null> {
    return this.reads.findOne(resource, where);
  }

  getMany(resource: string, ids: readonly string[]): Promise<StoredRecord[]> {
    return this.reads.getMany(resource, ids);
  }

  /**
   * A page a caller only reads is kept while the database's snapshot stays the same (src/store/list-cache.ts,
   * EpochReader.snapshot): the stamp is read after the call, shared with every caller of the moment, so a
   * commit anywhere before the call — by any process — is always seen; polling an unchanged page costs that
   * shared read instead of the page's query and count.
   */
  async list(resource: string, query: ListQuery): Promise<ListResult> {
    // A page too large to keep is not worth the stamp's round trip.
    const pages = this.pages;
    if (!query.shared || pages === undefined || !pages.keeps(query)) return this.reads.list(resource, query);
    // The read authentication waited for, when it was sent after the request arrived, is as good as a new one.
    const known = query.since === undefined ? undefined : this.epoch.readSince(query.since);
    const stamp = known?.snapshot ?? (await this.epoch.snapshot());
    return pages.through(resource, query, stamp, (q) => this.reads.list(resource, q, () => this.listRowsAt(stamp)));
  }

  /**
   * The rows shared lists read, kept under the last snapshot once it has held LIST_ROWS_AFTER_MS
   * (src/store/kept-list-rows.ts), asked when a page's rows have arrived, as `get` keeps a record: only while `stamp`
   * (read after the request arrived, before the page's statement was sent) is still current (stillAt). Rows read then
   * show at least every commit `stamp` shows; a row changed by a commit after it differs in version (every write of
   * ours moves it), or (a change by hand keeping the version) was committed by a transaction not ours, which empties
   * them.
   */
  private listRowsAt(stamp: string): RecordCache | undefined {
    const at = this.stillAt(stamp);
    return at === undefined ? undefined : this.listRows.at(at);
  }

  listGroups(resource: string, query: GroupQuery): Promise<Map<string, Group>> {
    return this.reads.listGroups(resource, query);
  }

  listEvents(afterSequence: number, limit: number, filter?: EventFilter): Promise<StoredEvent[]> {
    return this.reads.listEvents(afterSequence, limit, filter);
  }

  findIdempotency(scopeKey: string): Promise<IdempotencyRecord | null> {
    return this.reads.findIdempotency(scopeKey);
  }

  /** One statement in its own (READ COMMITTED) transaction: processes purging at once skip each other's deleted rows. */
  async purgeIdempotency(now: number, batch: number): Promise<number> {
    return (await this.pool.query(numbered(PURGE_IDEMPOTENCY), [batch, now])).rowCount ?? 0;
  }

  /**
   * READ COMMITTED, with the locks each read-check-write needs taken explicitly (Tx.lock: the row a change
   * or an action starts from, the rows a new row refers to, the order whose total an item changes), instead
   * of SERIALIZABLE: under SERIALIZABLE, concurrent inserts into one index (keyed creates, items of one order)
   * failed each other by predicate-lock false positives until the retries ran out (issue 13.3). A deadlock
   * is still possible between unrelated lock orders: the transaction then runs again after a jittered,
   * growing wait, and past MAX_ATTEMPTS the caller gets StoreBusy (503 with Retry-After), never a 500.
   */
  async transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      const tx = new PipelinedTx(client);
      // Every row written is forgotten before the caller is answered (finally, below), committed or not.
      const watch = new TxWrites(
        this.rowWrites,
        (xid) => this.own.own(xid),
        (resource, id) => this.records.forget(resource, id),
      );
      try {
        const ops = new PgOps(tx, () => this.requireModel(), this.statements, false, watch);
        const result = await fn(ops);
        await tx.commit();
        if (ops.bumpedTo !== undefined) this.epoch.seen(ops.bumpedTo);
        // Off the request path: the caller's events become readable once stamped (a failure is left to the sweep).
        if (ops.appended) this.sequencer.run().catch(() => undefined);
        return result;
      } catch (err) {
        await tx.rollback().catch(() => undefined);
        if (!retryable(err)) throw err;
        if (attempt >= MAX_ATTEMPTS) throw new StoreBusy(attempt, err);
        await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt)));
      } finally {
        watch.end();
        client.release();
      }
    }
  }

  async ping(): Promise<boolean> {
    try {
      await this.pool.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.sequencer.run().catch(() => undefined);
    await this.eventsChannel.close();
    await this.epoch.close();
    await this.pool.end();
  }
}
