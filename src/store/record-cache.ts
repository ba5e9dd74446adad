// Records read by id, kept until the database changes: a new stamp empties the cache, and a row written can be forgotten alone.
import { deepFreeze } from '../lib/deep-freeze.js';
import type { StoredRecord } from './types.js';

/** A record's key in the cache, and in what tracks the rows written (src/store/postgres/row-writes.ts). */
export const recordKey = (resource: string, id: string): string => `${resource}/${id}`;

/** Whether what was kept under stamp `from` still holds under the later `to` (PostgreSQL: OwnTransactions.carries). */
export type Carries = (from: number | string, to: number | string) => boolean;

/**
 * Validity is a stamp; when it moves, every entry goes, unless `carries` says the move was our own writes alone,
 * which forget exactly the rows they wrote (`forget`), so that a stream of writes leaves the other rows kept.
 * PostgreSQL's stamp is its snapshot (PgStore.cachedRecord), which every commit moves, this process's or another's:
 * `carries` tells ours apart (OwnTransactions). SQLite's moves on other processes' commits alone (ChangeStamps.others,
 * src/store/sqlite/change-stamps.ts), its own commits forgetting their rows (SqliteStore.committed).
 */
export class RecordCache {
  private readonly entries = new Map<string, StoredRecord>();
  private stamp: number | string | undefined;

  constructor(
    private readonly maxEntries = 10_000,
    private readonly carries?: Carries,
  ) {}

  /** Call before every lookup with the current stamp; a different stamp empties the cache, unless it `carries`. */
  validate(stamp: number | string): void {
    if (stamp === this.stamp) return;
    const from = this.stamp;
    this.stamp = stamp;
    if (from === undefined || this.carries?.(from, stamp) !== true) this.entries.clear();
  }

  get(resource: string, id: string): StoredRecord | undefined {
    return this.entries.get(recordKey(resource, id));
  }

  /**
   * The record kept for `id` when it is the row read now: the same version and update time (every change Canon makes
   * moves the version; one made by hand moves the stamp). The one test of the kept list rows on both stores.
   */
  same(resource: string, id: string, version: unknown, updatedAt: unknown): StoredRecord | undefined {
    const known = this.entries.get(recordKey(resource, id));
    return known !== undefined && known.version === version && known.updated_at === updatedAt ? known : undefined;
  }

  /** Drops the record kept for `id`: a row this process changed (SqliteStore.committed, PgStore.transaction). */
  forget(resource: string, id: string): void {
    this.entries.delete(recordKey(resource, id));
  }

  /** Drops every record at once, whatever the stamp. */
  clear(): void {
    this.entries.clear();
  }

  /** Stores and returns the record, frozen; when full, the oldest entry makes room. */
  set(resource: string, id: string, record: StoredRecord): StoredRecord {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    // Cached records are shared by every reader, so nothing may change them afterwards.
    this.entries.set(recordKey(resource, id), deepFreeze(record));
    return record;
  }
}
