// List results kept until the database changes, for callers that only read them: a page polled again costs no query.
import { deepFreeze } from '../lib/deep-freeze.js';
import type { ListQuery, ListResult } from './types.js';

/**
 * One change stamp, which moves on every commit of this process or another, empties it: on SQLite the
 * record cache's (src/store/sqlite/record-cache.ts), on PostgreSQL the database's snapshot read after the
 * call (src/store/postgres/epoch-reader.ts). A page is kept only when it is small
 * (keyset pages read one row more than they show). Memory is bounded by rows, as the record cache's is: at
 * most `maxRows` frozen records in all (so a client asking for many distinct pages of large rows cannot grow
 * it), in at most `maxEntries` pages; when full, the oldest pages make room.
 */
export class ListCache {
  private readonly entries = new Map<string, ListResult>();
  /** Totals of offset and page lists by filter: every page of one filter shares its count. */
  private readonly counts = new Map<string, number>();
  private rows = 0;
  private stamp: number | string | undefined;

  constructor(
    private readonly maxEntries = 1_000,
    private readonly maxRows = 10_000,
    private readonly maxPageRows = 101,
  ) {}

  /** Call before every lookup with the current stamp; a different stamp empties the cache. */
  validate(stamp: number | string): void {
    if (stamp === this.stamp) return;
    this.entries.clear();
    this.counts.clear();
    this.rows = 0;
    this.stamp = stamp;
  }

  /** Whether a query's result may be kept (a small page). */
  keeps(query: ListQuery): boolean {
    return query.limit <= this.maxPageRows;
  }

  /** The key of a query on `resource`, or undefined when its result is not kept (a large page). */
  keyOf(resource: string, query: ListQuery): string | undefined {
    if (!this.keeps(query)) return undefined;
    return `${resource} ${JSON.stringify([query.where, query.orderBy, query.limit, query.offset, query.after, query.search, query.withTotal])}`;
  }

  /**
   * A shared list read through the cache, as both stores do it: the page kept under `stamp` if there is one,
   * else `read` (its total from the kept count when there is one) and the page kept — unless the stamp moved
   * while it read (PostgreSQL reads asynchronously), for a page read under one stamp must not be kept under another.
   */
  async through(resource: string, query: ListQuery, stamp: number | string, read: (query: ListQuery) => Promise<ListResult>): Promise<ListResult> {
    this.validate(stamp);
    const key = this.keyOf(resource, query);
    const cached = key === undefined ? undefined : this.entries.get(key);
    if (cached) return cached;
    const result = await this.counted(resource, query, stamp, read);
    return key === undefined || this.stamp !== stamp ? result : this.set(key, result);
  }

  /**
   * A list's result with its total taken from the count kept for its filter (every page of a filter has the
   * same total until the stamp moves), `read` asked to count only when none is kept. An offset page read
   * anew then costs its page query alone.
   */
  async counted(resource: string, query: ListQuery, stamp: number | string, read: (query: ListQuery) => Promise<ListResult>): Promise<ListResult> {
    if (!query.withTotal) return read(query);
    this.validate(stamp);
    const key = `${resource} ${JSON.stringify([query.where, query.search])}`;
    const total = this.counts.get(key);
    if (total !== undefined) return { ...(await read({ ...query, withTotal: false })), total };
    const result = await read(query);
    // Kept only under the stamp it was counted at: another call may have moved it while this one read.
    if (result.total !== undefined && this.stamp === stamp) {
      if (this.counts.size >= this.maxEntries) this.counts.delete(this.counts.keys().next().value!);
      this.counts.set(key, result.total);
    }
    return result;
  }

  get(key: string): ListResult | undefined {
    return this.entries.get(key);
  }

  /** Stores and returns the result, frozen with every row: every later reader shares it. */
  set(key: string, result: ListResult): ListResult {
    while (this.entries.size > 0 && (this.entries.size >= this.maxEntries || this.rows + result.rows.length > this.maxRows)) {
      const [oldest, page] = this.entries.entries().next().value!;
      this.entries.delete(oldest);
      this.rows -= page.rows.length;
    }
    this.entries.set(key, deepFreeze(result));
    this.rows += result.rows.length;
    return result;
  }

  /** Pages and rows held (tests). */
  get size(): { pages: number; rows: number } {
    return { pages: this.entries.size, rows: this.rows };
  }
}
