// The SQLite store (better-sqlite3, WAL): a write connection serialised by a mutex, a read connection for committed reads.
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CompiledModel } from '../../model/compile.js';
import { Mutex } from '../mutex.js';
import { openDatabase } from './native-handles.js';
import { Connection, SharedPages, SqliteOps } from './sqlite-ops.js';
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
import { SQLITE_IDEMPOTENCY_HAS_UNIQUE_INDEX, idempotencyTable, sqliteIdempotencyWithoutUniqueIndex } from '../sql/idempotency.js';
import { IdempotencyDirectory } from './idempotency-directory.js';
import { INSERT_META_IF_ABSENT, META_TABLE, READ_META } from '../sql/meta.js';
import { CREDENTIAL_EPOCH_TABLE, READ_CREDENTIAL_EPOCH, SEED_CREDENTIAL_EPOCH } from '../sql/credential-epoch.js';
import { purgeEventsSql } from '../sql/events.js';
import { EVENTS_TABLE, EVENT_INDEXES, addColumn, createTable, indexes, quote } from './ddl.js';
import { migrateSearch } from './search-migration.js';
import { RecordCache } from '../record-cache.js';
import { ListCache } from '../list-cache.js';
import { KeptListRows, LIST_ROWS_AFTER_MS } from '../kept-list-rows.js';
import { KeptRows } from './kept-rows.js';
import { BUSY_TIMEOUT_MS, GroupCommit, sqliteBusy } from './group-commit.js';
import { switchToWal } from './wal-mode.js';
import { COUNTS_TABLE, migrateCounts } from './row-counts.js';
import { WalSync } from './wal-sync.js';
import { ChangeStamps } from './change-stamps.js';

/**
 * The database holds password hashes, key digests and sealed secrets: a new file is created readable by
 * its owner only (0600), in a directory only its owner can enter (0700) when Canon creates that too.
 * SQLite gives the WAL and shared-memory files the database file's mode. Existing files keep the mode
 * their operator gave them.
 */
function createOwnerOnly(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
}

export interface SqliteOptions {
  /** A file path, or `:memory:`. */
  path: string;
  /** `full` (the default) fsyncs the WAL at every commit; `normal` only at checkpoints (https://sqlite.org/pragma.html#pragma_synchronous). */
  synchronous?: 'full' | 'normal';
  /** Keep small pages and offset counts until the next commit (default true; src/store/list-cache.ts). */
  listCache?: boolean;
  /** How long the change stamp must have held before shared lists keep their rows (default LIST_ROWS_AFTER_MS; tests set 0). */
  listRowsAfterMs?: number;
  /** How long a connection waits for another process's lock before SQLITE_BUSY (default BUSY_TIMEOUT_MS; tests set less). */
  busyTimeoutMs?: number;
}

export { BUSY_TIMEOUT_MS };

export class SqliteStore implements Store {
  readonly capabilities = { fullTextSearch: true, announcesEvents: false };
  private readonly writer: Connection;
  private readonly reader: Connection;
  private readonly memory: boolean;
  private readonly mutex = new Mutex();
  private model: CompiledModel | undefined;
  private readonly writeOps: SqliteOps;
  private readonly readOps: SqliteOps;
  private readonly idempotency: IdempotencyDirectory;
  /** Records read by id, valid under other processes' stamp (ChangeStamps.others); our own commits forget the rows they wrote (see committed). */
  private readonly records = new RecordCache();
  /** Rows of shared lists (SqliteOps.list's `kept`), under the same stamp and forgetting as `records`. */
  private readonly listRows: KeptListRows<KeptRows>;
  /** How shared lists were read, by either connection (SqliteOps.list). */
  private readonly pageReads = new SharedPages();
  /** Undefined when switched off (CANON_LIST_CACHE=off): every list is read. */
  private readonly pages: ListCache | undefined;
  private readonly group: GroupCommit;
  /** Syncs the WAL before writers are answered (`synchronous: 'full'` on a file); undefined otherwise. */
  private readonly walSync: WalSync | undefined;
  /** Every commit's stamp, and other processes' alone (src/store/sqlite/change-stamps.ts). */
  private readonly stamps: ChangeStamps;
  /** The credentials epoch as last read, and the change stamp it was read at. */
  private epoch = 0;
  private epochStamp: number | undefined;

  constructor(options: SqliteOptions) {
    this.memory = options.path === ':memory:';
    this.pages = options.listCache === false ? undefined : new ListCache();
    this.listRows = new KeptListRows(options.listRowsAfterMs ?? LIST_ROWS_AFTER_MS, new KeptRows(10_000));
    if (!this.memory) createOwnerOnly(options.path);
    const db = openDatabase(options.path);
    // WAL lets the read connection see committed data while a write transaction is open. In WAL mode
    // synchronous=FULL fsyncs the log at every commit, so an acknowledged write survives power loss;
    // NORMAL survives a process crash only, losing the last commits to an OS crash (https://sqlite.org/wal.html).
    // exec, not db.pragma(): pragma() prepares a statement and drops it (see native-handles.ts).
    // The busy timeout first: switching a new file to WAL waits for another process opening it at the same moment
    // (and where SQLite's handler will not wait, switchToWal does).
    const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? BUSY_TIMEOUT_MS));
    const busyTimeout = `PRAGMA busy_timeout = ${busyTimeoutMs}`;
    db.exec(busyTimeout);
    switchToWal(db, busyTimeoutMs);
    // FULL's sync happens outside SQLite, off the event loop, before a writer is answered (wal-sync.ts).
    db.exec('PRAGMA synchronous = NORMAL');
    this.walSync = this.memory || options.synchronous === 'normal' ? undefined : new WalSync(`${options.path}-wal`);
    this.writer = new Connection(db);
    this.stamps = new ChangeStamps(this.writer, this.memory);
    if (this.memory) {
      this.reader = this.writer;
    } else {
      const rdb = openDatabase(options.path, { readonly: true });
      rdb.exec(busyTimeout);
      this.reader = new Connection(rdb);
    }
    const model = (): CompiledModel => {
      if (!this.model) throw new Error('store used before migrate()');
      return this.model;
    };
    this.idempotency = new IdempotencyDirectory((sql) => this.writer.stmt(sql));
    this.writeOps = new SqliteOps(this.writer, model, this.idempotency, this.pageReads);
    this.group = new GroupCommit(
      this.writer,
      this.idempotency,
      (body) => this.mutex.run(body),
      () => this.committed(),
      this.memory ? null : busyTimeoutMs,
      this.walSync === undefined ? null : () => this.walSync!.afterCommit(),
    );
    this.readOps = new SqliteOps(this.reader, model, this.idempotency, this.pageReads);
  }

  /** The `synchronous` pragma in force on the write connection (1 NORMAL: FULL's sync is the store's, see walSyncs). */
  get synchronous(): number {
    return Number(this.writer.stmt('PRAGMA synchronous').pluck().get());
  }

  /** How many times the WAL was synced before writers were answered (wal-sync.ts); undefined when nothing is synced (`normal`, `:memory:`). */
  get walSyncs(): number | undefined {
    return this.walSync?.completed;
  }

  async migrate(model: CompiledModel): Promise<void> {
    this.model = model;
    const db = this.writer.db;
    // IMMEDIATE: processes starting at once on one file queue for the write lock (busy_timeout). A deferred
    // transaction that read the schema first fails at once (SQLITE_BUSY) when another process wrote meanwhile,
    // which no busy handler can wait out (https://sqlite.org/lang_transaction.html#deferred_immediate_and_exclusive_transactions).
    const migration = db.transaction(() => {
      db.exec(EVENTS_TABLE);
      for (const ix of EVENT_INDEXES) db.exec(ix);
      db.exec(CREDENTIAL_EPOCH_TABLE);
      db.exec(META_TABLE);
      db.exec(COUNTS_TABLE);
      db.exec(SEED_CREDENTIAL_EPOCH);
      this.migrateIdempotency();
      for (const r of model.resources.values()) {
        db.exec(createTable(r));
        const existing = new Set((this.writer.stmt(`PRAGMA table_info(${quote(r.table)})`).all() as Array<{ name: string }>).map((c) => c.name));
        // Additive changes only: new columns are added; nothing is dropped or retyped on start.
        for (const c of r.columns) if (!existing.has(c.name)) db.exec(addColumn(r, c));
        for (const ix of indexes(r)) db.exec(ix);
        migrateSearch(this.writer, r);
        migrateCounts(this.writer, r);
      }
    });
    try {
      migration.immediate();
      this.walSync?.syncNow();
    } catch (err) {
      // The write lock still held elsewhere after the busy timeout: nothing was changed, and the start may try again
      // (src/runtime/while-busy.ts).
      throw sqliteBusy(err) ? new StoreBusy(1, err) : err;
    }
    this.idempotency.load();
  }

  /**
   * The idempotency table without a UNIQUE index (see IdempotencyDirectory). A table made by an earlier
   * build with one is copied into the new form: SQLite cannot drop a constraint's index in place.
   */
  private migrateIdempotency(): void {
    const db = this.writer.db;
    const statements = this.writer.stmt(SQLITE_IDEMPOTENCY_HAS_UNIQUE_INDEX).get() ? sqliteIdempotencyWithoutUniqueIndex() : [idempotencyTable('seq INTEGER PRIMARY KEY', false)];
    for (const sql of statements) db.exec(sql);
  }

  /**
   * Plain reads see committed data only. Between transactions the write connection holds nothing
   * uncommitted, and its page cache is warm, so reads go there: SQLite empties a connection's page cache
   * whenever another connection commits, so after every write the read connection would fetch each page
   * again with system calls (a keyed POST's look-up cost ten times more there). While a transaction is
   * open, files read through the read connection (WAL: the last committed snapshot) and memory waits for
   * the commit. Every read below runs its statements synchronously, so no transaction can begin halfway.
   */
  private async read<T>(fn: (ops: SqliteOps) => Promise<T>): Promise<T> {
    if (!this.mutex.locked) return fn(this.writeOps);
    if (this.memory) return this.mutex.run(() => fn(this.readOps));
    return fn(this.readOps);
  }

  /**
   * After a COMMIT that changed rows, before any writer is answered: the stamp moves (pages, counts, the epoch), and
   * the records kept for the rows it wrote are forgotten. A read that ran before the COMMIT kept what it read in its
   * own synchronous turn (`get`, SqliteOps.list), so nothing read before it is kept after it.
   */
  private committed(): void {
    this.stamps.ourCommit();
    const written = this.writeOps.takeWritten();
    if (written === 'all') {
      this.records.clear();
      this.listRows.clear();
      return;
    }
    for (const [resource, id] of written) {
      this.records.forget(resource, id);
      this.listRows.forget(resource, id);
    }
  }

  /**
   * Reads by id are the hottest path (every GET of an object, ownership checks): cached until a commit of ours
   * writes the row or another process commits. Read and kept in one synchronous turn: a COMMIT cannot come between
   * (see committed).
   */
  get(resource: string, id: string): Promise<StoredRecord | null> {
    return this.read(async (o) => {
      const cached = this.currentRecord(resource, id);
      if (cached) return cached;
      const record = o.getNow(resource, id);
      return record ? this.records.set(resource, id, record) : null;
    });
  }

  /** As `get` reads its cache; in memory, a transaction in progress must end first (see read), so nothing is answered then. */
  cachedRecord(resource: string, id: string): StoredRecord | undefined {
    if (this.memory && this.mutex.locked) return undefined;
    return this.currentRecord(resource, id);
  }

  private currentRecord(resource: string, id: string): StoredRecord | undefined {
    this.records.validate(this.stamps.others());
    return this.records.get(resource, id);
  }

  findOne(resource: string, where: Condition[]): Promise<StoredRecord | null> {
    return this.read((o) => o.findOne(resource, where));
  }

  getMany(resource: string, ids: readonly string[]): Promise<StoredRecord[]> {
    return this.read((o) => o.getMany(resource, ids));
  }

  /** In a write transaction: one process on the file at a time, so the first one's value is what all read. */
  metaValue(key: string, candidate: string): Promise<string> {
    return this.transaction(async () => {
      this.writer.stmt(INSERT_META_IF_ABSENT).run(key, candidate);
      return String(this.writer.stmt(READ_META).pluck().get(key));
    });
  }

  /**
   * Read again only when the change stamp moved: our commits move it at once, other processes' within the
   * event-loop turn (ChangeStamps.all), so a key revoked by another process on the same file is refused from
   * its next request on. Usually a number: no promise on the authentication of a cached key.
   */
  credentialEpoch(): number | Promise<number> {
    return this.credentialEpochNow() ?? this.mutex.run(async () => this.readEpoch(this.writer));
  }

  /** The epoch as credentialEpoch reads it, when that needs no wait: always, except in memory during a transaction. */
  credentialEpochNow(): number | undefined {
    if (this.stamps.all() === this.epochStamp) return this.epoch;
    // As plain reads (see read): the write connection between transactions, the last commit during one;
    // in memory, once the transaction has ended.
    if (!this.mutex.locked) return this.readEpoch(this.writer);
    return this.memory ? undefined : this.readEpoch(this.reader);
  }

  /**
   * The change stamp (ChangeStamps.all): other processes' commits within the event-loop turn, as the record cache
   * sees them. In memory, while a transaction is in progress, reads wait for it (see read): nothing to tell then.
   */
  readStamp(): number | undefined {
    if (this.memory && this.mutex.locked) return undefined;
    return this.stamps.all();
  }

  private readEpoch(conn: Connection): number {
    this.epochStamp = this.stamps.all();
    this.epoch = Number(conn.stmt(READ_CREDENTIAL_EPOCH).pluck().get());
    return this.epoch;
  }

  /** A page a caller only reads is kept until the next commit (src/store/list-cache.ts): polling a list costs no query. */
  list(resource: string, query: ListQuery): Promise<ListResult> {
    const pages = this.pages;
    if (!query.shared) return this.read((o) => o.list(resource, query));
    if (pages === undefined) return this.read((o) => o.list(resource, query, this.listRowsNow()));
    // Seeking (src/store/offset-seeks.ts): the stamp is taken in the turn the page is read, and the read is synchronous.
    return this.read((o) => pages.through(resource, query, this.stamps.all(), (q) => o.list(resource, q, this.listRowsNow()), true));
  }

  /**
   * The rows shared lists read, kept under other processes' stamp once it has held LIST_ROWS_AFTER_MS; undefined
   * before. Called in the synchronous turn of the read, and other processes' commits are asked for then, not once
   * per turn as the record cache does: a kept row is answered by its rowid alone, with nothing of the row read to
   * tell it changed (KeptRows). Apart from the record cache, so that pages nobody reads by id do not push out the
   * records reads by id keep.
   */
  private listRowsNow(): KeptRows | undefined {
    return this.listRows.at(this.stamps.othersNow());
  }

  /** Shared lists answered by rowids from kept rows, with some rows read by rowid, and read whole (SqliteOps.list): for tests. */
  get sharedPages(): { kept: number; filled: number; whole: number } {
    return { kept: this.pageReads.kept, filled: this.pageReads.filled, whole: this.pageReads.whole };
  }

  listGroups(resource: string, query: GroupQuery): Promise<Map<string, Group>> {
    return this.read((o) => o.listGroups(resource, query));
  }

  listEvents(afterSequence: number, limit: number, filter?: EventFilter): Promise<StoredEvent[]> {
    return this.read((o) => o.listEvents(afterSequence, limit, filter));
  }

  findEvent(id: string): Promise<StoredEvent | null> {
    return this.read((o) => o.findEvent(id));
  }

  lastEventSequence(): Promise<number> {
    return this.read((o) => o.lastEventSequence());
  }

  /** Events are numbered by AUTOINCREMENT under the one writer, so in commit order already. */
  async sequenceEvents(): Promise<number> {
    return 0;
  }

  purgeEvents(before: string, batch: number, through?: number): Promise<number> {
    if (through === undefined) return this.mutex.run(async () => this.writer.stmt(purgeEventsSql('sequence')).run(before, batch).changes);
    return this.mutex.run(async () => this.writer.stmt(purgeEventsSql('sequence', 'sequence')).run(before, through, batch).changes);
  }

  /** No cross-process channel on a file: other processes' events reach readers by the fan-out or by polling. */
  watchEvents(): () => void {
    return () => undefined;
  }

  /**
   * Outside a transaction (a keyed request refused before its own began, or a lost race): on the write
   * connection once any transaction in progress has ended, so never an uncommitted record, and with warm
   * pages; the read connection would fetch the index pages again after every commit (see read).
   */
  findIdempotency(scopeKey: string): Promise<IdempotencyRecord | null> {
    if (!this.mutex.locked) return this.writeOps.findIdempotency(scopeKey);
    return this.mutex.run(() => this.writeOps.findIdempotency(scopeKey));
  }

  purgeIdempotency(now: number, batch: number): Promise<number> {
    return this.mutex.run(async () => this.idempotency.purge(now, batch));
  }

  /** Transactions that queue while one runs commit together, each in its own savepoint (src/store/sqlite/group-commit.ts). */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.group.run(() => fn(this.writeOps));
  }

  /** Prepared statements the connections' caches hold (bounded: src/store/sqlite/sqlite-ops.ts): for tests. */
  get cachedStatements(): number {
    return this.writer.cached + (this.reader === this.writer ? 0 : this.reader.cached);
  }

  async ping(): Promise<boolean> {
    try {
      this.reader.stmt('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    // Writers already committed are answered first (their WAL sync), before the files close.
    await this.walSync?.settled();
    await this.mutex.run(async () => {
      if (this.reader !== this.writer) this.reader.db.close();
      this.writer.db.close();
      this.walSync?.close();
    });
  }
}
