// SQL on one PostgreSQL connection or the pool: every read and write a transaction or a plain read makes (the store's Tx).
import type pg from 'pg';
import type { CompiledModel, CompiledResource } from '../../model/compile.js';
import { resourceOf, tableName } from '../../model/compile.js';
import { GROUP_TOTAL, RANK_COLUMN, getManySql, groupsSql, inOrder, listSql, quote, sumSql, whereClause, type Sql } from '../sql/queries.js';
import {
  UniqueViolation,
  type Condition,
  type EventFilter,
  type EventRecord,
  type Group,
  type GroupQuery,
  type IdempotencyRecord,
  type ListQuery,
  type ListResult,
  type LockMode,
  type StoredEvent,
  type StoredRecord,
  type Tx,
} from '../types.js';
import { DELETE_EXPIRED_IDEMPOTENCY, FIND_IDEMPOTENCY, IDEMPOTENCY_RESOURCE, INSERT_IDEMPOTENCY } from '../sql/idempotency.js';
import { MAX_PARAMETERS, SEARCH_COLUMN, columnTypes } from './ddl.js';
import type { Statements } from './statements.js';
import { numbered, pgDialect } from './dialect.js';
import { eventFromRow, fromRow, toRow, type Row } from '../sql/rows.js';
import { columnList, pgCodec } from './rows.js';
import { searchDocument } from './search.js';
import { INSERT_EVENT, eventPageSql, eventParams } from '../sql/events.js';
import { BUMP_CREDENTIAL_EPOCH } from '../sql/credential-epoch.js';
import type { RecordCache } from '../record-cache.js';
import { countSql } from './row-counts.js';
import { countKeys } from '../sql/count-keys.js';
import { PipelinedTx } from './pipelined-tx.js';
import { KEPT_PAGE_COLUMNS, KeptShare, keptPage, keptRows } from './kept-page.js';
import type { WriteWatch } from './row-writes.js';

/** The API's `sequence` is the stamped commit sequence; the insertion `sequence` column stays internal. */
const EVENT_COLUMNS = 'commit_sequence AS sequence, id, type, resource, object_id, owner_id, api_version, created_at, data, previous_attributes';

/** The writing transaction's id (PgOps.writing; src/store/postgres/own-transactions.ts). */
const TRANSACTION_ID = 'SELECT txid_current() AS xid';

/** The page statement's column holding its kept total (listCounted). */
const TOTAL_COLUMN = '_canon_total';

/** Row locks by purpose (see LockMode): NO KEY UPDATE for changes, so references (KEY SHARE) never wait on them. */
const ROW_LOCKS: Record<LockMode, string> = { update: 'FOR NO KEY UPDATE', delete: 'FOR UPDATE', reference: 'FOR KEY SHARE' };

/** The pool (plain reads), a transaction's statements (PipelinedTx), or one connection (the migration). */
export interface Queryable {
  query(config: pg.QueryConfig<unknown[]> | string, values?: unknown[]): Promise<pg.QueryResult>;
}

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

/**
 * Text PostgreSQL reads as a uuid (its uuid_in: 32 hex digits in either case, a hyphen allowed after any four of
 * them but the last, the whole optionally in braces), so that any other id is known to name nothing without asking.
 */
const PG_UUID = /^(?:\{[0-9a-f]{4}(?:-?[0-9a-f]{4}){7}\}|[0-9a-f]{4}(?:-?[0-9a-f]{4}){7})$/i;
export const pgUuid = (text: string): boolean => PG_UUID.test(text);

/** A page's select list with its total as one more column: a scalar subquery PostgreSQL runs once (PgOps.listCounted). */
function withTotalColumn(select: string, total: Sql): Sql {
  return { text: `${select}, (${total.text}) AS ${quote(TOTAL_COLUMN)}`, params: total.params };
}

export class PgOps implements Tx {
  /** The credentials epoch this transaction moved to, known to this process once it commits. */
  bumpedTo: number | undefined;
  /** Whether this transaction wrote events: once it commits, they are stamped. */
  appended = false;

  constructor(
    private readonly db: Queryable,
    private readonly model: () => CompiledModel,
    private readonly statements: Statements,
    /**
     * Offset totals of the filters the triggers count are read from their counts (src/store/postgres/row-counts.ts):
     * outside transactions only, as those counts take a transaction's own writes in at its commit.
     */
    private readonly keptCounts = false,
    /** A transaction's watch (PgStore.transaction): told the rows about to be written, and the transaction's id. */
    private readonly watch?: WriteWatch,
  ) {}

  /** Whether the transaction's id was asked for: with its first write. */
  private xidAsked = false;
  /** How many rows of shared pages were found kept lately (kept-page.ts): made by the first shared page (the pool's reads, which live as long as the store), never by a transaction's reads. */
  private share: KeptShare | undefined;

  private get keptShare(): KeptShare {
    return (this.share ??= new KeptShare());
  }

  /**
   * Before a statement writes `ids` of `r`: the watch is told, and the transaction's id is asked for (ownId).
   * Only transactions have a watch (PgStore.transaction).
   */
  private writing(r: CompiledResource, ids: readonly string[]): void {
    const watch = this.watch;
    if (watch === undefined) return;
    this.ownId(watch);
    watch.writing(r.name, ids);
  }

  /**
   * Before the transaction's first statement that takes a transaction id (a write, or a row lock: PostgreSQL marks a
   * locked row with the locker's id), that id is asked for, sent with the statement in one pipelined batch, ahead of
   * it, so it is known before any COMMIT is sent. A transaction that only locks changes no row, so the caches may keep
   * what they hold across its end; unknown, its id moved the snapshot as another process's commit does, and every
   * cache was emptied: the webhook dispatcher locks its frontier row at every tick, about once a second, and so
   * emptied the list cache, the kept rows and the records of a read-only workload (issue 31).
   */
  private ownId(watch: WriteWatch): void {
    if (this.xidAsked || !(this.db instanceof PipelinedTx)) return;
    this.xidAsked = true;
    this.db.deferred(this.statement(TRANSACTION_ID, []), undefined, (res) => watch.xid(Number((res.rows[0] as { xid: unknown }).xid)));
  }

  private resource(name: string): CompiledResource {
    return resourceOf(this.model(), name);
  }

  private async rows(sql: string, params: unknown[]): Promise<Row[]> {
    return (await this.db.query(this.statement(sql, params))).rows as Row[];
  }

  /**
   * `sql` as `pg` sends it: named (parsed and planned once per connection) while the budget of names lasts
   * (statements.ts). Writes of one row are named too: unnamed, PostgreSQL parsed and planned each one again, 60–130 µs
   * of its CPU per UPDATE, INSERT or DELETE of a product (pg_stat_statements, the mixed benchmark, 2026-11-29).
   */
  private statement(sql: string, params: unknown[]): pg.QueryConfig<unknown[]> {
    const { text, name } = this.statements.of(sql);
    return name === undefined ? { text, values: params } : { text, name, values: params };
  }

  get(resource: string, id: string): Promise<StoredRecord | null> {
    return this.byId(resource, id, '');
  }

  /**
   * One record by id, `suffix` being a row lock or nothing; an id that is not a UUID names no record. Told before
   * asking: PostgreSQL's refusal (22P02) would abort the transaction the read is in, and every statement after it.
   */
  private async byId(resource: string, id: string, suffix: string): Promise<StoredRecord | null> {
    const r = this.resource(resource);
    if (!pgUuid(id)) return null;
    const [row] = await this.rows(`SELECT ${columnList(r)} FROM ${quote(r.table)} WHERE id = ?${suffix}`, [id]);
    return row ? fromRow(r, row, pgCodec) : null;
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
    if (this.watch !== undefined) this.ownId(this.watch);
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

  /**
   * `kept`, asked once the rows have arrived: records read under the snapshot those rows were read under (a shared list
   * only, whose rows nobody changes), or undefined when the snapshot may have moved. A row whose id, version and update
   * time match one of them is that record, not decoded again (and the item text rendered from it is reused, as on
   * SQLite); a row decoded is kept there, frozen.
   */
  async list(resource: string, query: ListQuery, kept?: () => RecordCache | undefined): Promise<ListResult> {
    const r = this.resource(resource);
    // Rows kept now are likely kept when the page arrives: its statement then selects ids and versions alone (kept-page.ts).
    if (query.search === undefined && this.keptShare.worth && kept?.() !== undefined) {
      const page = await this.keptList(r, query, kept);
      if (page !== undefined) return page;
    }
    if (query.withTotal && query.search === undefined) return this.listCounted(r, query, this.keptTotal(r, query), kept);
    const sql = listSql(pgDialect, r, query, tableName);
    if (!sql) return query.withTotal ? { rows: [], ranks: [], total: 0 } : { rows: [], ranks: [] };
    // A search's count (offset and page styles) is sent beside the page: on the pool they run at once on two
    // connections, in a transaction one after the other on its client. Either way, one wait instead of two.
    const [raw, counted] = await Promise.all([this.rows(sql.page.text, sql.page.params), query.withTotal ? this.rows(sql.count.text, sql.count.params) : undefined]);
    const result = this.decoded(r, query, raw, kept);
    if (query.search !== undefined) result.ranks = raw.map((row) => Number(row[RANK_COLUMN]));
    if (counted) result.total = Number(counted[0]!.n);
    return result;
  }

  /**
   * An offset or page-style page with its total as a column of the page's own statement: `keptTotal` is the kept counts'
   * sum (src/store/postgres/row-counts.ts), else the filter's COUNT(*); a scalar subquery PostgreSQL runs once. One round
   * trip, one statement for PostgreSQL to run, and the total is of the snapshot the rows are. Against the count sent
   * at once on a second connection (bench/uncached.mjs, random filtered pages, 3 repeats, 2026-11-29): 1.04x the
   * pages a second at 180 against 194 µs of Canon's CPU a page. An empty page carries no row to hold the total: at the
   * start of the order it is then 0, further on it is read alone.
   */
  private async listCounted(r: CompiledResource, query: ListQuery, keptTotal: Sql | undefined, kept?: () => RecordCache | undefined): Promise<ListResult> {
    const sql = listSql(pgDialect, r, query, tableName, (count) => withTotalColumn(columnList(r), keptTotal ?? count))!;
    const raw = await this.rows(sql.page.text, sql.page.params);
    return { ...this.decoded(r, query, raw, kept), total: await this.pageTotal(query, raw, keptTotal ?? sql.count) };
  }

  /** The kept counts' sum for an offset page's total, where they count its filter (outside transactions: keptCounts). */
  private keptTotal(r: CompiledResource, query: ListQuery): Sql | undefined {
    const keys = this.keptCounts ? countKeys(r, query) : undefined;
    return keys && countSql(r.table, keys);
  }

  /** The total a page's statement carried as a column; an empty page carries none: 0 at the start of the order, else `total` read alone. */
  private async pageTotal(query: ListQuery, raw: readonly Row[], total: Sql): Promise<number> {
    if (raw.length > 0) return Number(raw[0]![TOTAL_COLUMN]);
    return !query.offset && query.after === undefined ? 0 : Number((await this.rows(total.text, total.params))[0]!.n);
  }

  /**
   * A page (no search) whose statement selects its rows' ids, versions and update times alone, the rows `kept` holds
   * answering for themselves and the others read by id (keptPage); undefined when keptPage says it must be read whole.
   */
  private async keptList(r: CompiledResource, query: ListQuery, kept: () => RecordCache | undefined): Promise<ListResult | undefined> {
    const keptTotal = query.withTotal ? this.keptTotal(r, query) : undefined;
    const sql = listSql(pgDialect, r, query, tableName, query.withTotal ? (count) => withTotalColumn(KEPT_PAGE_COLUMNS, keptTotal ?? count) : KEPT_PAGE_COLUMNS)!;
    const raw = await this.rows(sql.page.text, sql.page.params);
    const rows = raw.length === 0 ? [] : await keptPage(r, raw, kept, (text, params) => this.rows(text, params), this.keptShare);
    if (rows === undefined) return undefined;
    return query.withTotal ? { rows, total: await this.pageTotal(query, raw, keptTotal ?? sql.count) } : { rows };
  }

  /** A page's rows as records: the kept ones where `kept` has them (no search: a search's rows carry their rank). */
  private decoded(r: CompiledResource, query: ListQuery, raw: Row[], kept?: () => RecordCache | undefined): ListResult {
    const rows = query.search === undefined ? kept?.() : undefined;
    return { rows: rows === undefined ? raw.map((row) => fromRow(r, row, pgCodec)) : keptRows(r, raw, rows, this.keptShare) };
  }

  async listGroups(resource: string, query: GroupQuery): Promise<Map<string, Group>> {
    const r = this.resource(resource);
    const sql = groupsSql(pgDialect, r, query, tableName);
    const groups = new Map<string, Group>();
    if (!sql) return groups;
    for (const row of await this.rows(sql.text, sql.params)) {
      const key = String(row[query.field]);
      let group = groups.get(key);
      // COUNT(*) is a bigint: pg hands it over as text.
      if (!group) groups.set(key, (group = { rows: [], total: Number(row[GROUP_TOTAL]) }));
      group.rows.push(fromRow(r, row, pgCodec));
    }
    return groups;
  }

  /** Only stamped events exist for readers: the commit-ordered `commit_sequence` is the API's `sequence`. */
  async listEvents(afterSequence: number, limit: number, filter?: EventFilter): Promise<StoredEvent[]> {
    const sql = eventPageSql('commit_sequence', EVENT_COLUMNS, afterSequence, limit, filter);
    return (await this.rows(sql.text, sql.params)).map((row) => eventFromRow(row, pgCodec));
  }

  async findEvent(id: string): Promise<StoredEvent | null> {
    if (!pgUuid(id)) return null;
    const [row] = await this.rows(`SELECT ${EVENT_COLUMNS} FROM canon_events WHERE id = ? AND commit_sequence IS NOT NULL`, [id]);
    return row ? eventFromRow(row, pgCodec) : null;
  }

  async lastEventSequence(): Promise<number> {
    return Number((await this.rows('SELECT last FROM canon_event_sequencer WHERE id = 1', []))[0]?.last ?? 0);
  }

  async insert(resource: string, record: StoredRecord): Promise<void> {
    const r = this.resource(resource);
    this.writing(r, [record.id]);
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
    this.writing(r, [record.id]);
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
    this.writing(
      r,
      records.map((record) => record.id),
    );
    for (const { cols, chunk, params } of rowChunks(r, records)) {
      const tuple = `(${cols.map(() => '?').join(', ')})`;
      await this.write(r, `INSERT INTO ${quote(r.table)} (${cols.map(quote).join(', ')}) VALUES ${chunk.map(() => tuple).join(', ')}`, params, false);
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
    this.writing(
      r,
      records.map((record) => record.id),
    );
    const types = columnTypes(r);
    for (const { cols, chunk, params } of rowChunks(r, records)) {
      const tuple = `(${cols.map((c) => `?::${types.get(c)}`).join(', ')})`;
      const sets = cols.filter((c) => c !== 'id').map((c) => `${quote(c)} = v.${quote(c)}`);
      const sql = `UPDATE ${quote(r.table)} AS t SET ${sets.join(', ')} FROM (VALUES ${chunk.map(() => tuple).join(', ')}) AS v (${cols.map(quote).join(', ')}) WHERE t.id = v.id`;
      await this.write(r, sql, params, false);
    }
  }

  async delete(resource: string, id: string): Promise<boolean> {
    const r = this.resource(resource);
    this.writing(r, [id]);
    return ((await this.db.query(this.statement(`DELETE FROM ${quote(r.table)} WHERE id = ?`, [id]))).rowCount ?? 0) > 0;
  }

  /** Unstamped: the sequencer numbers it once committed (src/store/postgres/event-sequencer.ts). */
  async appendEvent(e: EventRecord): Promise<void> {
    this.appended = true;
    // In a transaction, sent with the next statement or the COMMIT: nothing reads its result (pipelined-tx.ts).
    const statement = this.statement(INSERT_EVENT, eventParams(e));
    if (this.db instanceof PipelinedTx) this.db.deferred(statement);
    else await this.db.query(statement);
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

  /**
   * Maps unique violations (SQLSTATE 23505) to the store contract's UniqueViolation, naming the field. `named`: a
   * statement of one row, whose text is the same for every row of `r`; a batch's varies with its size, so it is not.
   */
  private async write(r: CompiledResource, sql: string, params: unknown[], named = true): Promise<void> {
    try {
      await this.db.query(named ? this.statement(sql, params) : { text: numbered(sql), values: params });
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
