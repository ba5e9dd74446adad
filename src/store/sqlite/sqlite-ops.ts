// SQL on one SQLite connection: the statement cache, and every read and write a transaction or a plain read makes.
import type Database from 'better-sqlite3';
import type { CompiledModel, CompiledResource } from '../../model/compile.js';
import { resourceOf, tableName } from '../../model/compile.js';
import { prepare, retire } from './native-handles.js';
import { StatementCache } from './statement-cache.js';
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
  type StoredEvent,
  type StoredRecord,
  type Tx,
} from '../types.js';
import type { IdempotencyDirectory } from './idempotency-directory.js';
import type { KeptRows } from './kept-rows.js';
import { BUMP_CREDENTIAL_EPOCH } from '../sql/credential-epoch.js';
import { quote } from './ddl.js';
import { GROUP_TOTAL, RANK_COLUMN, getManySql, groupsSql, inOrder, listSql, sumSql, whereClause } from '../sql/queries.js';
import { sqliteDialect } from './dialect.js';
import { arrayRowDecoder, eventFromRow, fromRow, toRow, type Row } from '../sql/rows.js';
import { INSERT_EVENT, eventPageSql, eventParams } from '../sql/events.js';
import { sqliteCodec } from './rows.js';
import { countSql } from './row-counts.js';
import { countKeys } from '../sql/count-keys.js';

type Db = Database.Database;

/** A statement whose rows come as arrays, with the decoder of its columns and the search rank's position. */
interface ArrayStatement {
  stmt: Database.Statement;
  decode: (values: unknown[]) => StoredRecord;
  rank: number;
  /** Where a row's rowid sits (see SqliteOps.list's `kept`), -1 when not selected. */
  ridAt: number;
  /** How many columns the decoder knows: another process adding a column changes what `SELECT *` returns. */
  width: number;
  /** The result's column names, in order. */
  columns: string[];
}

/**
 * Statements one connection keeps prepared, apart from list statements read as arrays. The store's own
 * statements per resource (by id, insert, update, delete, events, idempotency) number a few dozen; the rest
 * are shaped by what clients filter on (src/store/sql/queries.ts keeps that to one statement per set of
 * filtered fields and operators, whatever the values), so the bound is what keeps a client varying its
 * filters from growing the process without end.
 */
export const STATEMENTS_MAX = 512;
/** List statements one connection keeps prepared: one per filter set, sort and page style in use. */
export const LIST_STATEMENTS_MAX = 512;

/**
 * Prepared statements cached per connection (preparing costs more than running a point lookup), in bounded
 * caches: what they evict is retired and later released (src/store/sqlite/native-handles.ts).
 */
export class Connection {
  private readonly cache = new StatementCache<Database.Statement>(STATEMENTS_MAX, retire);
  /** Apart from `cache`: raw mode is a setting of the statement object, which `stmt` callers expect off. */
  private readonly arrayCache = new StatementCache<ArrayStatement>(LIST_STATEMENTS_MAX, (a) => retire(a.stmt));
  /** The same lists' statements selecting rowids alone (see SqliteOps.keptPage). */
  private readonly ridCache = new StatementCache<Database.Statement>(LIST_STATEMENTS_MAX, retire);
  constructor(readonly db: Db) {}
  stmt(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = prepare(this.db, sql);
      this.cache.set(sql, s);
    }
    return s;
  }

  /**
   * A list statement of `r` read as arrays (src/store/sql/rows.ts arrayRowDecoder). `stale`: its rows had
   * another width than its decoder knows (SQLite re-prepared it after a schema change), so the columns are
   * read again.
   */
  arrays(r: CompiledResource, sql: string, stale = false): ArrayStatement {
    let a = this.arrayCache.get(sql);
    if (!a || stale) {
      const stmt = a?.stmt ?? prepare(this.db, sql).raw(true);
      const columns = stmt.columns().map((c) => c.name);
      a = {
        stmt,
        decode: arrayRowDecoder(r, columns, sqliteCodec),
        rank: columns.indexOf(RANK_COLUMN),
        ridAt: columns.indexOf(sqliteDialect.rowKey),
        width: columns.length,
        columns,
      };
      this.arrayCache.set(sql, a);
    }
    return a;
  }

  /** A list statement selecting rowids alone, each row's one value (`pluck`): SqliteOps.keptPage. */
  rowids(sql: string): Database.Statement {
    let s = this.ridCache.get(sql);
    if (!s) {
      s = prepare(this.db, sql).pluck(true);
      this.ridCache.set(sql, s);
    }
    return s;
  }

  /** Statements held in the three caches: for tests. */
  get cached(): number {
    return this.cache.size + this.arrayCache.size + this.ridCache.size;
  }
}

/** Rows of a page not kept, read by their rowids in one statement (one text for any number: Dialect.oneOf). */
const byRowids = (table: string): string => `SELECT * FROM ${quote(table)} WHERE ${sqliteDialect.oneOf(sqliteDialect.rowKey)}`;

/** How a store's shared lists were read, one for both of its connections (reads move between them, see SqliteStore.read). */
export class SharedPages {
  /** Shared lists answered by rowids with every row kept, with some rows read by rowid, and read whole: lets tests tell them apart. */
  kept = 0;
  filled = 0;
  whole = 0;
}

/** Past this many rows written and not yet taken (transactions rolled back, nothing committed since), a commit forgets every kept row. */
const WRITTEN_MAX = 10_000;

/** Reads and writes on one connection; the store hands one to each transaction and one to plain reads. */
export class SqliteOps implements Tx {
  /** The rows this connection's transactions inserted, updated or deleted since `takeWritten`, as resource and id. */
  private written: Array<[string, string]> = [];
  /** More than WRITTEN_MAX were written: `takeWritten` answers "all". */
  private writtenOverflow = false;

  constructor(
    private readonly conn: Connection,
    private readonly model: () => CompiledModel,
    private readonly idempotency: IdempotencyDirectory,
    private readonly shared = new SharedPages(),
  ) {}

  private resource(name: string): CompiledResource {
    return resourceOf(this.model(), name);
  }

  async get(resource: string, id: string): Promise<StoredRecord | null> {
    return this.getNow(resource, id);
  }

  /** `get` in the caller's synchronous turn: SqliteStore.get keeps what it read before any commit can come between. */
  getNow(resource: string, id: string): StoredRecord | null {
    const r = this.resource(resource);
    const row = this.conn.stmt(`SELECT * FROM ${quote(r.table)} WHERE id = ?`).get(id) as Row | undefined;
    return row ? fromRow(r, row, sqliteCodec) : null;
  }

  async getMany(resource: string, ids: readonly string[]): Promise<StoredRecord[]> {
    const r = this.resource(resource);
    const sql = getManySql(sqliteDialect, r, ids);
    if (!sql) return [];
    // Read as arrays, as list pages are: better-sqlite3 builds an object per row for nothing otherwise (measured:
    // 50 products by id, 380 µs as objects, 130 µs as arrays).
    const { raw, a } = this.arraysOf(r, sql.text, sql.params);
    return inOrder(sql.ids, raw.map(a.decode));
  }

  /**
   * A statement's rows as arrays, with their decoder; when another process's column changed the width, SQLite has
   * re-prepared the statement, so these rows already have the new columns: only the decoder is made again.
   */
  private arraysOf(r: CompiledResource, text: string, params: readonly unknown[]): { raw: unknown[][]; a: ArrayStatement } {
    let a = this.conn.arrays(r, text);
    const raw = a.stmt.all(...params) as unknown[][];
    if (raw.length > 0 && raw[0]!.length !== a.width) a = this.conn.arrays(r, text, true);
    return { raw, a };
  }

  /** One writer at a time (BEGIN IMMEDIATE): a write transaction holds every row already. */
  lock(resource: string, id: string): Promise<StoredRecord | null> {
    return this.get(resource, id);
  }

  async sum(resource: string, where: Condition[], factors: string[]): Promise<number> {
    const sql = sumSql(sqliteDialect, this.resource(resource), where, factors, tableName);
    return Number(
      this.conn
        .stmt(sql.text)
        .pluck()
        .get(...sql.params),
    );
  }

  async findOne(resource: string, where: Condition[]): Promise<StoredRecord | null> {
    const r = this.resource(resource);
    const w = whereClause(sqliteDialect, r, where, tableName);
    const row = this.conn.stmt(`SELECT * FROM ${quote(r.table)} WHERE ${w.text} LIMIT 1`).get(...w.params) as Row | undefined;
    return row ? fromRow(r, row, sqliteCodec) : null;
  }

  /**
   * `kept`: the rows shared lists read (a shared list only, whose rows nobody changes), valid as they stand (see
   * KeptRows): the page's statement selects rowids alone, each answered by the record kept for it, and the rows not
   * kept are read by rowid, decoded and kept (frozen). Rows that recur across pages then reuse their record, and
   * with it the item text rendered from it (src/http/rendering/object-body.ts itemJson).
   */
  async list(resource: string, query: ListQuery, kept?: KeptRows): Promise<ListResult> {
    const r = this.resource(resource);
    let result: ListResult | undefined;
    // The statements of the rowids read, when it is tried: its count is the whole page's.
    let sql: ReturnType<typeof listSql>;
    const shared = this.shared;
    if (kept !== undefined && query.search === undefined) {
      sql = listSql(sqliteDialect, r, query, tableName, sqliteDialect.rowKey)!;
      const rows = this.keptPage(r, sql.page, kept);
      if (rows !== undefined) result = { rows };
    }
    if (result === undefined) {
      if (kept !== undefined) shared.whole++;
      sql = listSql(sqliteDialect, r, query, tableName);
      // A search with no searchable words matches nothing.
      if (!sql) return query.withTotal ? { rows: [], ranks: [], total: 0 } : { rows: [], ranks: [] };
      const { raw, a } = this.arraysOf(r, sql.page.text, sql.page.params);
      const { decode, rank, ridAt } = a;
      result = { rows: kept === undefined || ridAt < 0 ? raw.map(decode) : raw.map((values) => kept.set(r.name, values[ridAt] as number, decode(values))) };
      if (query.search !== undefined) result.ranks = raw.map((row) => row[rank] as number);
    }
    if (query.withTotal) {
      // The filters the triggers count (no filter, one enum) are read from their counts (src/store/sqlite/row-counts.ts).
      const keys = countKeys(r, query);
      const count = keys ? countSql(r.table, keys) : sql!.count;
      result.total = (this.conn.stmt(count.text).get(...count.params) as { n: number }).n;
    }
    return result;
  }

  /**
   * The page's rows by their rowids: the page's statement selecting the rowid alone (every index holds it, so SQLite
   * reads no table row for it), each answered by the record `kept` holds, the others read in one statement by
   * rowid and kept. Undefined when a rowid found no row there (another process deleted it between the two
   * statements), and the caller reads the page whole. Both run in the caller's synchronous turn.
   */
  private keptPage(r: CompiledResource, page: { text: string; params: unknown[] }, kept: KeptRows): StoredRecord[] | undefined {
    const rids = this.conn.rowids(page.text).all(...page.params) as number[];
    const rows = new Array<StoredRecord>(rids.length);
    let missing: number[] | undefined;
    for (let i = 0; i < rids.length; i++) {
      const known = kept.get(r.name, rids[i]!);
      if (known !== undefined) rows[i] = known;
      else (missing ??= []).push(i);
    }
    if (missing === undefined) {
      this.shared.kept++;
      return rows;
    }
    const { raw, a } = this.arraysOf(r, byRowids(r.table), [sqliteDialect.list(missing.map((i) => rids[i]))]);
    const read = new Map<number, unknown[]>();
    for (const values of raw) read.set(values[a.ridAt] as number, values);
    for (const i of missing) {
      const values = read.get(rids[i]!);
      if (values === undefined) return undefined;
      rows[i] = kept.set(r.name, rids[i]!, a.decode(values));
    }
    this.shared.filled++;
    return rows;
  }

  async listGroups(resource: string, query: GroupQuery): Promise<Map<string, Group>> {
    const r = this.resource(resource);
    const sql = groupsSql(sqliteDialect, r, query, tableName);
    if (!sql) return new Map();
    const { raw, a } = this.arraysOf(r, sql.text, sql.params);
    const keyAt = a.columns.indexOf(query.field);
    if (keyAt < 0) throw new Error(`listGroups: ${r.name}.${query.field} is not a column of the result`);
    return groupsOf(raw, a, keyAt, a.columns.indexOf(GROUP_TOTAL));
  }

  async listEvents(afterSequence: number, limit: number, filter?: EventFilter): Promise<StoredEvent[]> {
    const sql = eventPageSql('sequence', '*', afterSequence, limit, filter);
    return (this.conn.stmt(sql.text).all(...sql.params) as Row[]).map((row) => eventFromRow(row, sqliteCodec));
  }

  async findEvent(id: string): Promise<StoredEvent | null> {
    const row = this.conn.stmt('SELECT * FROM canon_events WHERE id = ?').get(id) as Row | undefined;
    return row ? eventFromRow(row, sqliteCodec) : null;
  }

  async lastEventSequence(): Promise<number> {
    // The AUTOINCREMENT high-water mark survives the purge of every row: a stream never restarts below it.
    const mark = this.conn.stmt("SELECT seq FROM sqlite_sequence WHERE name = 'canon_events'").pluck().get() as number | undefined;
    return mark ?? 0;
  }

  /**
   * The rows written since the last call (SqliteStore forgets their kept records once the COMMIT is done), or "all"
   * when more than WRITTEN_MAX were. Rows of transactions rolled back are among them until then: forgetting a row
   * that did not change only costs its next read.
   */
  takeWritten(): Array<[string, string]> | 'all' {
    const taken = this.writtenOverflow ? 'all' : this.written;
    this.written = [];
    this.writtenOverflow = false;
    return taken;
  }

  private wrote(resource: string, id: unknown): void {
    if (this.writtenOverflow) return;
    if (this.written.length >= WRITTEN_MAX) {
      this.writtenOverflow = true;
      this.written = [];
      return;
    }
    this.written.push([resource, String(id)]);
  }

  async insert(resource: string, record: StoredRecord): Promise<void> {
    const r = this.resource(resource);
    this.wrote(r.name, record.id);
    const row = toRow(r, record, sqliteCodec);
    const cols = Object.keys(row);
    const sql = `INSERT INTO ${quote(r.table)} (${cols.map(quote).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
    this.write(r.name, () => this.conn.stmt(sql).run(...cols.map((c) => row[c])));
  }

  async update(resource: string, record: StoredRecord): Promise<void> {
    const r = this.resource(resource);
    this.wrote(r.name, record.id);
    const row = toRow(r, record, sqliteCodec);
    const cols = Object.keys(row).filter((c) => c !== 'id');
    const sql = `UPDATE ${quote(r.table)} SET ${cols.map((c) => `${quote(c)} = ?`).join(', ')} WHERE id = ?`;
    this.write(r.name, () => this.conn.stmt(sql).run(...cols.map((c) => row[c]), record.id));
  }

  /** One statement per record is already the cheapest form here: SQLite runs in this process, no round trips. */
  async insertMany(resource: string, records: readonly StoredRecord[]): Promise<void> {
    for (const record of records) await this.insert(resource, record);
  }

  async updateMany(resource: string, records: readonly StoredRecord[]): Promise<void> {
    for (const record of records) await this.update(resource, record);
  }

  async delete(resource: string, id: string): Promise<boolean> {
    const r = this.resource(resource);
    this.wrote(r.name, id);
    return this.conn.stmt(`DELETE FROM ${quote(r.table)} WHERE id = ?`).run(id).changes > 0;
  }

  async appendEvent(e: EventRecord): Promise<void> {
    this.conn.stmt(INSERT_EVENT).run(...eventParams(e));
  }

  // Idempotency records live on the write connection whichever ops ask (see SqliteStore.findIdempotency).
  async findIdempotency(scopeKey: string): Promise<IdempotencyRecord | null> {
    return this.idempotency.find(scopeKey);
  }

  async insertIdempotency(record: IdempotencyRecord): Promise<void> {
    this.idempotency.insert(record);
  }

  async deleteExpiredIdempotency(scopeKey: string, now: number): Promise<boolean> {
    return this.idempotency.deleteExpired(scopeKey, now);
  }

  // Other processes see the new epoch through their change stamp (SqliteStore.credentialEpoch).
  async bumpCredentialEpoch(): Promise<void> {
    this.conn.stmt(BUMP_CREDENTIAL_EPOCH).get();
  }

  /** Turns SQLite's unique-constraint failure into the store contract's UniqueViolation. */
  private write(resource: string, fn: () => unknown): void {
    try {
      fn();
    } catch (err) {
      const e = err as { code?: string; message?: string };
      if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        const m = /UNIQUE constraint failed: [^.]+\.(\w+)/.exec(e.message ?? '');
        throw new UniqueViolation(resource, m?.[1] ?? 'id');
      }
      throw err;
    }
  }
}

/** Rows of a group statement (src/store/sql/queries.ts groupsSql), ordered by group, as groups by the group's value. */
function groupsOf(raw: unknown[][], a: ArrayStatement, keyAt: number, totalAt: number): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const row of raw) {
    const key = String(row[keyAt]);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { rows: [], total: Number(row[totalAt]) }));
    group.rows.push(a.decode(row));
  }
  return groups;
}
