// The rows shared lists read, kept under one change stamp once it has held a while: later pages reuse those records (and the item texts rendered from them).
import type { Carries, RecordCache } from './record-cache.js';

/**
 * Shared lists keep their rows only once the change stamp has held this long. On PostgreSQL every commit of another
 * process empties them (on SQLite too), and under a stream of commits keeping rows that are gone before anyone reads
 * them again cost more than all it saved: on SQLite
 * a mixed workload (issue 31.2: 20% writes, about 400 commits a second) went from 450 to 611 µs of CPU per request
 * with rows kept after every commit (docs/BENCHMARKS.md). Read-mostly traffic passes it within 50 ms of its last commit.
 */
export const LIST_ROWS_AFTER_MS = 50;

/** What KeptListRows holds rows in: PostgreSQL's RecordCache by id, SQLite's KeptRows by rowid. */
export interface StampedRows {
  /** Empties it when `stamp` is not the one it was last validated with. */
  validate(stamp: number | string): void;
  forget(resource: string, id: string): void;
  clear(): void;
}

/**
 * Both stores keep a shared list's rows apart from the records read by id (so that pages nobody reads by id do not
 * push those out), under the stamp the record cache uses: on SQLite other processes' commits (its own forget the rows
 * they wrote), PostgreSQL's snapshot. Only once the stamp has held `afterMs` (LIST_ROWS_AFTER_MS).
 */
export class KeptListRows<Rows extends StampedRows = RecordCache> {
  private stamp: number | string | undefined;
  /** When `stamp` was first seen (performance.now()). */
  private since = 0;

  constructor(
    private readonly afterMs: number,
    private readonly rows: Rows,
    /** A move of the stamp that keeps the rows (RecordCache's): it does not start the wait again. */
    private readonly carries?: Carries,
  ) {}

  /** Drops the row kept for `id`: a row this process changed (see SqliteStore.committed). */
  forget(resource: string, id: string): void {
    this.rows.forget(resource, id);
  }

  /** Drops every row kept. */
  clear(): void {
    this.rows.clear();
  }

  /** The rows kept under `stamp`, the current one, once it has held `afterMs`; undefined before. */
  at(stamp: number | string, now = performance.now()): Rows | undefined {
    if (stamp !== this.stamp) {
      const from = this.stamp;
      this.stamp = stamp;
      if (from === undefined || this.carries?.(from, stamp) !== true) this.since = now;
    }
    if (now - this.since < this.afterMs) return undefined;
    this.rows.validate(stamp);
    return this.rows;
  }
}
