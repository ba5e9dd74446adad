// The PostgreSQL store (`pg`, pooled): serializable transactions retried on conflict, migrations under an advisory lock.
import pg from 'pg';
import type { CompiledModel, CompiledResource } from '../../model/compile.js';
import { resourceOf, tableName } from '../../model/compile.js';
import { RANK_COLUMN, getManySql, inOrder, listSql, quote, sumSql, whereClause } from '../sql/queries.js';
import {
  StoreBusy,
  UniqueViolation,
  type Condition,
  type EventFilter,
  type EventRecord,
  type IdempotencyRecord,
  type ListQuery,
  type ListResult,
  type LockMode,
  type Store,
  type StoredEvent,
  type StoredRecord,
  type Tx,
} from '../types.js';
import { DELETE_EXPIRED_IDEMPOTENCY, FIND_IDEMPOTENCY, IDEMPOTENCY_RESOURCE, INSERT_IDEMPOTENCY, PURGE_IDEMPOTENCY, idempotencyTable } from '../sql/idempotency.js';
import { EVENTS_TABLE, MAX_PARAMETERS, SEARCH_COLUMN, columnTypes, createTable, indexes, pgType } from './ddl.js';
import { INSERT_META_IF_ABSENT, META_TABLE, READ_META } from '../sql/meta.js';
import { Statements } from './statements.js';
import { ListCache } from '../list-cache.js';
import { numbered, pgDialect } from './dialect.js';
import { eventFromRow, fromRow, toRow, type Row } from '../sql/rows.js';
import { columnList, pgCodec } from './rows.js';
import { searchDocument } from './search.js';
import { EpochReader } from './epoch-reader.js';
import { ChannelListener } from './channel-listener.js';
import { EVENTS_CHANNEL, EventSequencer, SEQUENCER_DDL } from './event-sequencer.js';
import { INSERT_EVENT, eventPageSql, eventParams, purgeEventsSql } from '../sql/events.js';

/** The API's `sequence` is the stamped commit sequence; the insertion `sequence` column stays internal. */
const EVENT_COLUMNS = 'commit_sequence AS sequence, id, type, resource, object_id, owner_id, api_version, created_at, data, previous_attributes';
import { deepFreeze } from '../../lib/deep-freeze.js';
import { backoffMs, MAX_ATTEMPTS, retryable } from './retry-policy.js';
import { BUMP_CREDENTIAL_EPOCH, CREDENTIAL_EPOCH_TABLE, SEED_CREDENTIAL_EPOCH } from '../sql/credential-epoch.js';

/** Every Canon process takes this advisory lock to migrate, so several can start at once. */
const MIGRATION_LOCK = 0x63616e6f; // "cano"
/** Row locks by purpose (see LockMode): NO KEY UPDATE for changes, so references (KEY SHARE) never wait on them. */
const ROW_LOCKS: Record<LockMode, string> = { update: 'FOR NO KEY UPDATE', delete: 'FOR UPDATE', reference: 'FOR KEY SHARE' };

type Queryable = pg.Pool | pg.PoolClient;

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

/** Records as rows, in chunks whose parameters stay under the protocol's 65,535, each with its flat parameters. */
function* rowChunks(r: CompiledResource, records: readonly StoredRecord[]): Generator<{ cols: string[]; chunk: Row[]; params: unknown[] }> {
  const rows = records.map((record) => toRow(r, record, pgCodec));
  const cols = Object.keys(rows[0]!);
  const per = Math.max(1, Math.floor(MAX_PARAMETERS / cols.length));
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    yield { cols, chunk, params: chunk.flatMap((row) => cols.map((c) => row[c])) };
  }
}

class PgOps implements Tx {
  /** The credentials epoch this transaction moved to, known to this process once it commits. */
  bumpedTo: number | undefined;
  /** Whether this transaction wrote events: once it commits, they are stamped. */
  appended = false;

  constructor(
    private readonly db: Queryable,
    private readonly model: () => CompiledModel,
    private readonly statements: Statements,
  ) {}

  private resource(name: string): CompiledResource {
    return resourceOf(this.model(), name);
  }

  private async rows(sql: string, params: unknown[]): Promise<Row[]> {
    const { text, name } = this.statements.of(sql);
    return (await this.db.query(name === undefined ? { text, values: params } : { text, name, values: params })).rows as Row[];
  }

  get(resource: string, id: string): Promise<StoredRecord | null> {
    return this.byId(resource, id, '');
  }

  /** One record by id, `suffix` being a row lock or nothing; an id that is not a UUID names no record. */
  private async byId(resource: string, id: string, suffix: string): Promise<StoredRecord | null> {
    const r = this.resource(resource);
    try {
      const [row] = await this.rows(`SELECT ${columnList(r)} FROM ${quote(r.table)} WHERE id = ?${suffix}`, [id]);
      return row ? fromRow(r, row, pgCodec) : null;
    } catch (err) {
      // Not a UUID: no object can have that id.
      if ((err as { code?: string }).code === '22P02') return null;
      throw err;
    }
  }

  async getMany(resource: string, ids: readonly string[]): Promise<StoredRecord[]> {
    const r = this.resource(resource);
    const sql = getManySql(pgDialect, r, ids);
    if (!sql) return [];
    return inOrder(
      sql.ids,
      (await this.rows(sql.text, sql.params)).map((row) => fromRow(r, row, pgCodec)),
    );
  }

  lock(resource: string, id: string, mode: LockMode): Promise<StoredRecord | null> {
    return this.byId(resource, id, ` ${ROW_LOCKS[mode]}`);
  }

  /** SUM of bigint products is numeric in PostgreSQL: exact, returned as text, read back as a number. */
  async sum(resource: string, where: Condition[], factors: string[]): Promise<number> {
    const sql = sumSql(pgDialect, this.resource(resource), where, factors, tableName);
    return Number((await this.rows(sql.text, sql.params))[0]!.total);
  }

  async findOne(resource: string, where: Condition[]): Promise<StoredRecord | null> {
    const r = this.resource(resource);
    const w = whereClause(pgDialect, r, where, tableName);
    const [row] = await this.rows(`SELECT ${columnList(r)} FROM ${quote(r.table)} WHERE ${w.text} LIMIT 1`, w.params);
    return row ? fromRow(r, row, pgCodec) : null;
  }

  async list(resource: string, query: ListQuery): Promise<ListResult> {
    const r = this.resource(resource);
    const sql = listSql(pgDialect, r, query, tableName);
    if (!sql) return query.withTotal ? { rows: [], ranks: [], total: 0 } : { rows: [], ranks: [] };
    // The count (offset and page styles) is sent beside the page: on the pool they run at once on two
    // connections, in a transaction one after the other on its client. Either way, one wait instead of two.
    const [raw, counted] = await Promise.all([this.rows(sql.page.text, sql.page.params), query.withTotal ? this.rows(sql.count.text, sql.count.params) : undefined]);
    const result: ListResult = { rows: raw.map((row) => fromRow(r, row, pgCodec)) };
    if (query.search !== undefined) result.ranks = raw.map((row) => Number(row[RANK_COLUMN]));
    if (counted) result.total = Number(counted[0]!.n);
    return result;
  }

  /** Only stamped events exist for readers: the commit-ordered `commit_sequence` is the API's `sequence`. */
  async listEvents(afterSequence: number, limit: number, filter?: EventFilter): Promise<StoredEvent[]> {
    const sql = eventPageSql('commit_sequence', EVENT_COLUMNS, afterSequence, limit, filter);
    return (await this.rows(sql.text, sql.params)).map((row) => eventFromRow(row, pgCodec));
  }

  async findEvent(id: string): Promise<StoredEvent | null> {
    try {
      const [row] = await this.rows(`SELECT ${EVENT_COLUMNS} FROM canon_events WHERE id = ? AND commit_sequence IS NOT NULL`, [id]);
      return row ? eventFromRow(row, pgCodec) : null;
    } catch (err) {
      if ((err as { code?: string }).code === '22P02') return null;
      throw err;
    }
  }

  async lastEventSequence(): Promise<number> {
    return Number((await this.rows('SELECT last FROM canon_event_sequencer WHERE id = 1', []))[0]?.last ?? 0);
  }

  async insert(resource: string, record: StoredRecord): Promise<void> {
    const r = this.resource(resource);
    const row = toRow(r, record, pgCodec);
    const cols = Object.keys(row);
    const values = cols.map(() => '?');
    const params = cols.map((c) => row[c]);
    if (r.searchable.length) {
      const doc = searchDocument(r, record);
      cols.push(SEARCH_COLUMN);
      values.push(doc.sql);
      params.push(...doc.params);
    }
    await this.write(r, `INSERT INTO ${quote(r.table)} (${cols.map(quote).join(', ')}) VALUES (${values.join(', ')})`, params);
  }

  async update(resource: string, record: StoredRecord): Promise<void> {
    const r = this.resource(resource);
    const row = toRow(r, record, pgCodec);
    const cols = Object.keys(row).filter((c) => c !== 'id');
    const sets = cols.map((c) => `${quote(c)} = ?`);
    const params = cols.map((c) => row[c]);
    if (r.searchable.length) {
      const doc = searchDocument(r, record);
      sets.push(`${SEARCH_COLUMN} = ${doc.sql}`);
      params.push(...doc.params);
    }
    await this.write(r, `UPDATE ${quote(r.table)} SET ${sets.join(', ')} WHERE id = ?`, [...params, record.id]);
  }

  /**
   * One multi-row INSERT per chunk: a worker's batch of 100 deliveries costs one round trip, not 100, and the
   * dispatcher's position lock is held that much shorter.
   */
  async insertMany(resource: string, records: readonly StoredRecord[]): Promise<void> {
    const r = this.resource(resource);
    if (records.length <= 1 || r.searchable.length) {
      for (const record of records) await this.insert(resource, record);
      return;
    }
    for (const { cols, chunk, params } of rowChunks(r, records)) {
      const tuple = `(${cols.map(() => '?').join(', ')})`;
      await this.write(r, `INSERT INTO ${quote(r.table)} (${cols.map(quote).join(', ')}) VALUES ${chunk.map(() => tuple).join(', ')}`, params);
    }
  }

  /**
   * One UPDATE … FROM (VALUES …) per chunk. Each value is cast to its column's type: a parameter in a VALUES
   * list would otherwise be text, and text is not assignable to jsonb, uuid or timestamptz columns.
   */
  async updateMany(resource: string, records: readonly StoredRecord[]): Promise<void> {
    const r = this.resource(resource);
    if (records.length <= 1 || r.searchable.length) {
      for (const record of records) await this.update(resource, record);
      return;
    }
    const types = columnTypes(r);
    for (const { cols, chunk, params } of rowChunks(r, records)) {
      const tuple = `(${cols.map((c) => `?::${types.get(c)}`).join(', ')})`;
      const sets = cols.filter((c) => c !== 'id').map((c) => `${quote(c)} = v.${quote(c)}`);
      const sql = `UPDATE ${quote(r.table)} AS t SET ${sets.join(', ')} FROM (VALUES ${chunk.map(() => tuple).join(', ')}) AS v (${cols.map(quote).join(', ')}) WHERE t.id = v.id`;
      await this.write(r, sql, params);
    }
  }

  async delete(resource: string, id: string): Promise<boolean> {
    const r = this.resource(resource);
    return ((await this.db.query(numbered(`DELETE FROM ${quote(r.table)} WHERE id = ?`), [id])).rowCount ?? 0) > 0;
  }

  /** Unstamped: the sequencer numbers it once committed (src/store/postgres/event-sequencer.ts). */
  async appendEvent(e: EventRecord): Promise<void> {
    this.appended = true;
    await this.db.query(numbered(INSERT_EVENT), eventParams(e));
  }

  async findIdempotency(scopeKey: string): Promise<IdempotencyRecord | null> {
    const [row] = await this.rows(FIND_IDEMPOTENCY, [scopeKey]);
    return (row as IdempotencyRecord | undefined) ?? null;
  }

  async insertIdempotency(record: IdempotencyRecord): Promise<void> {
    try {
      await this.db.query(numbered(INSERT_IDEMPOTENCY), [record.scopeKey, record.fingerprint, record.response, record.expiresAt]);
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new UniqueViolation(IDEMPOTENCY_RESOURCE, 'scope_key');
      throw err;
    }
  }

  async deleteExpiredIdempotency(scopeKey: string, now: number): Promise<boolean> {
    return ((await this.db.query(numbered(DELETE_EXPIRED_IDEMPOTENCY), [scopeKey, now])).rowCount ?? 0) > 0;
  }

  /** Every process sees the new epoch on its next read after this transaction commits (src/store/postgres/epoch-reader.ts). */
  async bumpCredentialEpoch(): Promise<void> {
    const [row] = await this.rows(BUMP_CREDENTIAL_EPOCH, []);
    this.bumpedTo = Number(row!.epoch);
  }

  /** Maps unique violations (SQLSTATE 23505) to the store contract's UniqueViolation, naming the field. */
  private async write(r: CompiledResource, sql: string, params: unknown[]): Promise<void> {
    try {
      await this.db.query(numbered(sql), params);
    } catch (err) {
      const e = err as { code?: string; constraint?: string };
      if (e.code === '23505') {
        const prefix = `ux_${r.table}_`;
        throw new UniqueViolation(r.name, e.constraint?.startsWith(prefix) ? e.constraint.slice(prefix.length) : 'id');
      }
      throw err;
    }
  }
}

export interface PgOptions {
  connectionString: string;
  /** Pool size per process. */
  max?: number;
  /** Name the most used statements, prepared once per connection (default true; src/store/postgres/statements.ts). */
  preparedStatements?: boolean;
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
  private readonly pages = new ListCache();

  constructor(options: PgOptions) {
    this.statements = new Statements(options.preparedStatements ?? true);
    // Sessions run in UTC so timestamps arrive as `…+00`, the form isoFromPg reads without a Date.
    const connection = { connectionString: options.connectionString, types, options: '-c TimeZone=UTC' };
    this.pool = new pg.Pool({ ...connection, max: options.max ?? 10 });
    // An idle client's error (the server restarted) must not crash the process; the next query reconnects.
    this.pool.on('error', () => undefined);
    this.reads = new PgOps(this.pool, () => this.requireModel(), this.statements);
    this.epoch = new EpochReader(() => new pg.Client(connection), this.pool);
    this.sequencer = new EventSequencer(this.pool);
    this.eventsChannel = new ChannelListener(EVENTS_CHANNEL, () => new pg.Client(connection));
  }

  sequenceEvents(): Promise<number> {
    return this.sequencer.run();
  }

  watchEvents(listener: () => void): () => void {
    return this.eventsChannel.add(listener);
  }

  /** By insertion position: old rows are all stamped (the sweep runs every second), and it is the primary key. */
  async purgeEvents(before: string, batch: number): Promise<number> {
    return (await this.pool.query(numbered(purgeEventsSql('sequence')), [before, batch])).rowCount ?? 0;
  }

  findEvent(id: string): Promise<StoredEvent | null> {
    return this.reads.findEvent(id);
  }

  lastEventSequence(): Promise<number> {
    return this.reads.lastEventSequence();
  }

  credentialEpoch(): Promise<number> {
    return this.epoch.current();
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
      await client.query(EVENTS_TABLE);
      for (const statement of SEQUENCER_DDL) await client.query(statement);
      await client.query(idempotencyTable('seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY', true));
      await client.query(CREDENTIAL_EPOCH_TABLE);
      await client.query(SEED_CREDENTIAL_EPOCH);
      for (const r of model.resources.values()) {
        await client.query(createTable(r));
        // Additive changes only: new columns are added; nothing is dropped or retyped on start.
        for (const c of r.columns) await client.query(`ALTER TABLE ${quote(r.table)} ADD COLUMN IF NOT EXISTS ${quote(c.name)} ${pgType(c)}`);
        if (r.searchable.length) await client.query(`ALTER TABLE ${quote(r.table)} ADD COLUMN IF NOT EXISTS ${SEARCH_COLUMN} tsvector`);
        for (const ix of indexes(r)) await client.query(ix);
        await this.migrateSearch(client, r);
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
    await client.query('INSERT INTO canon_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value', [key, wanted]);
  }

  /** Atomic without the migration lock: of processes inserting at once, one row wins and all read it. */
  async metaValue(key: string, candidate: string): Promise<string> {
    await this.pool.query(numbered(INSERT_META_IF_ABSENT), [key, candidate]);
    return String((await this.pool.query(numbered(READ_META), [key])).rows[0]!.value);
  }

  /** Frozen, as the SQLite adapter's are (Reader): callers behave the same on both stores. */
  async get(resource: string, id: string): Promise<StoredRecord | null> {
    return deepFreeze(await this.reads.get(resource, id));
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
    if (!query.shared) return this.reads.list(resource, query);
    const key = this.pages.keyOf(resource, query);
    if (key === undefined) return this.reads.list(resource, query);
    const stamp = await this.epoch.snapshot();
    this.pages.validate(stamp);
    const cached = this.pages.get(key);
    if (cached) return cached;
    const result = await this.pages.counted(resource, query, stamp, (q) => this.reads.list(resource, q));
    // Another call may have moved the stamp while this one read: keep the page only under the stamp it was read at.
    this.pages.validate(stamp);
    return this.pages.set(key, result);
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
      try {
        await client.query('BEGIN');
        const ops = new PgOps(client, () => this.requireModel(), this.statements);
        const result = await fn(ops);
        await client.query('COMMIT');
        if (ops.bumpedTo !== undefined) this.epoch.seen(ops.bumpedTo);
        // Off the request path: the caller's events become readable once stamped (a failure is left to the sweep).
        if (ops.appended) this.sequencer.run().catch(() => undefined);
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        if (!retryable(err)) throw err;
        if (attempt >= MAX_ATTEMPTS) throw new StoreBusy(attempt, err);
        await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt)));
      } finally {
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
