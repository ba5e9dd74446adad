// SQLite's idempotency records: an append-only table, found by key through an in-memory directory instead of a UNIQUE index.
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import { UniqueViolation, type IdempotencyRecord } from '../types.js';
import {
  DELETE_IDEMPOTENCY_BY_SEQ,
  FIND_IDEMPOTENCY_BY_SEQ,
  IDEMPOTENCY_RESOURCE,
  IDEMPOTENCY_TAIL,
  INSERT_IDEMPOTENCY,
  OLDEST_IDEMPOTENCY_SEQ,
  PURGE_IDEMPOTENCY,
} from '../sql/idempotency.js';

/** Prepares (once, cached by the store) a statement on the write connection. */
export type Prepare = (sql: string) => Database.Statement;

/** A V8 Map holds at most 2^24 entries: sixteen of them hold 268 million keys. */
const SHARDS = 16;

/** FNV-1a over the key's UTF-16 code units, seeded; 31 bits, so hashes stay small integers in the maps. */
export function keyHash(scopeKey: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < scopeKey.length; i++) h = Math.imul(h ^ scopeKey.charCodeAt(i), 0x01000193) >>> 0;
  return h >>> 1;
}

/**
 * Why not a UNIQUE index on scope_key: keys are random, so every keyed POST would write one more page at a
 * random place in the file, and on SQLite each page a commit touches costs a WAL frame, its checkpoint
 * copy and its share of the fsync; measured (docs/BENCHMARKS.md), the index was a third of what a key
 * cost a POST. The table itself is appended to in `seq` order (one page, the last), and this directory
 * maps each key to its row: a 31-bit hash of the key to the seq (or seqs, on a collision) of the rows
 * that may hold it, about 50 bytes per live key. A candidate is always confirmed by reading its row, so a
 * stale or colliding entry can cost a look-up, never a wrong answer.
 *
 * Exact across processes sharing the file: every operation first reads the rows other connections
 * appended since this one last looked (`sync`), and inside a write transaction (BEGIN IMMEDIATE, one
 * writer at a time) nothing can be appended between that read and the insert. Rows are only ever
 * appended above the highest seq (SQLite gives a new rowid max + 1), so the rows after the last one seen
 * are all there is to read, as long as that last row is still there: when it is not (purged, or replaced
 * with another key), the directory is read again from the table.
 *
 * This connection's own inserts join the directory only once their transaction commits (`commit`), so a
 * rollback leaves no entry behind. Entries of deleted rows go when a look-up finds the row gone, or when
 * the purge passes them (`evictBefore`): the directory follows the table's 24 h window, not its history.
 */
export class IdempotencyDirectory {
  private readonly shards: Array<Map<number, number | number[]>> = Array.from({ length: SHARDS }, () => new Map());
  /** Seqs and key hashes in seq order, for eviction from the oldest end; `head` is the first one still held. */
  private order: number[] = [];
  private orderHashes: number[] = [];
  private head = 0;
  /** The last row read from the table: its seq and key (0 before the first read). */
  private lastSeq = 0;
  private lastKey: string | undefined;
  /** Inserted by the open transaction; applied at commit, dropped at rollback. */
  private pending: Array<{ seq: number; scopeKey: string }> = [];
  /** Inside a write transaction once `sync` has run: no other connection can append until it ends. */
  private syncedInTransaction = false;
  private inTransaction = false;
  /**
   * `seed` is random per process, so which keys share a hash cannot be worked out from outside (tests
   * pass one to make collisions on purpose).
   */
  constructor(
    private readonly prepare: Prepare,
    private readonly seed = randomBytes(4).readUInt32LE(0),
  ) {}

  /** Live keys held (tests and diagnostics). */
  get size(): number {
    return this.order.length - this.head;
  }

  private hash(scopeKey: string): number {
    return keyHash(scopeKey, this.seed);
  }

  private add(hash: number, seq: number): void {
    const shard = this.shards[hash & (SHARDS - 1)]!;
    const at = shard.get(hash);
    if (at === undefined) shard.set(hash, seq);
    else if (typeof at === 'number') shard.set(hash, [at, seq]);
    else at.push(seq);
    this.order.push(seq);
    this.orderHashes.push(hash);
  }

  private remove(hash: number, seq: number): void {
    const shard = this.shards[hash & (SHARDS - 1)]!;
    const at = shard.get(hash);
    if (at === seq) shard.delete(hash);
    else if (Array.isArray(at)) {
      const rest = at.filter((s) => s !== seq);
      if (rest.length === 0) shard.delete(hash);
      else shard.set(hash, rest.length === 1 ? rest[0]! : rest);
    }
  }

  private clear(): void {
    for (const shard of this.shards) shard.clear();
    this.order = [];
    this.orderHashes = [];
    this.head = 0;
    this.lastSeq = 0;
    this.lastKey = undefined;
  }

  /** Reads the table into the directory at start, so that no request waits for it (about 1.6 s per million live keys). */
  load(): void {
    this.sync();
  }

  /** Reads the rows appended since the last look (by any connection); see the class comment. */
  private sync(): void {
    const rows = this.prepare(IDEMPOTENCY_TAIL).raw().all(this.lastSeq) as Array<[number, string]>;
    let from = 0;
    if (this.lastSeq > 0) {
      const first = rows[0];
      if (first === undefined || first[0] !== this.lastSeq || first[1] !== this.lastKey) {
        // The last row seen is gone or holds another key: what lies below it may have changed too.
        this.clear();
        this.sync();
        return;
      }
      from = 1;
    }
    // This transaction's own inserts are rows already on this connection: they join at commit, not here.
    const own = this.pending[0]?.seq ?? Number.POSITIVE_INFINITY;
    for (let i = from; i < rows.length; i++) {
      const [seq, scopeKey] = rows[i]!;
      if (seq >= own) break;
      this.took(seq, scopeKey);
    }
  }

  /** A committed row, newer than every one taken so far, joins the directory. */
  private took(seq: number, scopeKey: string): void {
    this.add(this.hash(scopeKey), seq);
    this.lastSeq = seq;
    this.lastKey = scopeKey;
  }

  /** The row holding `scopeKey`, with its seq: this transaction's own insert first, else the newest committed one. */
  private locate(scopeKey: string): { seq: number; record: IdempotencyRecord } | null {
    // A keyed POST looks its key up, then inserts it: one read of the table's tail serves both.
    if (!this.syncedInTransaction) {
      this.sync();
      this.syncedInTransaction = this.inTransaction;
    }
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const p = this.pending[i]!;
      if (p.scopeKey === scopeKey) return { seq: p.seq, record: this.prepare(FIND_IDEMPOTENCY_BY_SEQ).get(p.seq) as IdempotencyRecord };
    }
    const hash = this.hash(scopeKey);
    const at = this.shards[hash & (SHARDS - 1)]!.get(hash);
    if (at === undefined) return null;
    const seqs = typeof at === 'number' ? [at] : [...at].sort((a, b) => b - a);
    for (const seq of seqs) {
      const record = this.prepare(FIND_IDEMPOTENCY_BY_SEQ).get(seq) as IdempotencyRecord | undefined;
      // Gone (expired and deleted): forgotten here too. Only expired rows are ever deleted, so even a
      // deletion this transaction may yet roll back loses nothing a look-up should find.
      if (record === undefined) this.remove(hash, seq);
      else if (record.scopeKey === scopeKey) return { seq, record };
    }
    return null;
  }

  find(scopeKey: string): IdempotencyRecord | null {
    return this.locate(scopeKey)?.record ?? null;
  }

  /** Inside a write transaction. A key that has a row already, live or expired, is refused, as a UNIQUE index would. */
  insert(record: IdempotencyRecord): void {
    if (this.locate(record.scopeKey)) throw new UniqueViolation(IDEMPOTENCY_RESOURCE, 'scope_key');
    const info = this.prepare(INSERT_IDEMPOTENCY).run(record.scopeKey, record.fingerprint, record.response, record.expiresAt);
    this.pending.push({ seq: Number(info.lastInsertRowid), scopeKey: record.scopeKey });
  }

  /** Inside a write transaction: deletes the key's row if it expired by `now`. */
  deleteExpired(scopeKey: string, now: number): boolean {
    const found = this.locate(scopeKey);
    if (!found || found.record.expiresAt > now) return false;
    this.prepare(DELETE_IDEMPOTENCY_BY_SEQ).run(found.seq);
    this.pending = this.pending.filter((p) => p.seq !== found.seq);
    return true;
  }

  /** One purge batch (outside transactions, committed at once); entries older than the oldest row left go too. */
  purge(now: number, batch: number): number {
    const deleted = this.prepare(PURGE_IDEMPOTENCY).run(batch, now).changes;
    const oldest = this.prepare(OLDEST_IDEMPOTENCY_SEQ).pluck().get() as number | null;
    this.evictBefore(oldest ?? Number.POSITIVE_INFINITY);
    return deleted;
  }

  /** Forgets every entry below `seq`: rows the purge (of any process) has deleted, oldest first. */
  private evictBefore(seq: number): void {
    while (this.head < this.order.length && this.order[this.head]! < seq) {
      this.remove(this.orderHashes[this.head]!, this.order[this.head]!);
      this.head++;
    }
    // Compacts once the evicted prefix outweighs what is left, so the arrays stay proportional to live keys.
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.orderHashes = this.orderHashes.slice(this.head);
      this.head = 0;
    }
  }

  /** A write transaction (BEGIN IMMEDIATE) began on the connection: from its first look-up, the table is this connection's alone. */
  begin(): void {
    this.inTransaction = true;
  }

  /** The open transaction committed: its inserts are rows now, after every row read so far. */
  commit(): void {
    for (const { seq, scopeKey } of this.pending) this.took(seq, scopeKey);
    this.rollback();
  }

  /** The open transaction's inserts as of now (a savepoint's: src/store/sqlite/group-commit.ts). */
  mark(): unknown {
    return [...this.pending];
  }

  /** A savepoint was rolled back: the inserts are again what they were at `mark` (deletions since undone too). */
  undoTo(mark: unknown): void {
    this.pending = [...(mark as Array<{ seq: number; scopeKey: string }>)];
  }

  /** The open transaction ended; its inserts, if it committed, were taken first. */
  rollback(): void {
    this.inTransaction = false;
    this.syncedInTransaction = false;
    this.pending = [];
  }
}
