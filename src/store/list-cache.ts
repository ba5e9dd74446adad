// List results kept until the database changes, for callers that only read them: a page polled again costs no query.
import { deepFreeze } from '../lib/deep-freeze.js';
import { OffsetSeeks } from './offset-seeks.js';
import type { ListQuery, ListResult } from './types.js';

/**
 * One change stamp, which moves on every commit of this process or another, empties it: on SQLite the
 * record cache's (src/store/record-cache.ts), on PostgreSQL the database's snapshot read after the
 * call (src/store/postgres/epoch-reader.ts). A page is kept only when it is small
 * (keyset pages read one row more than they show). Memory is bounded by rows, as the record cache's is: at
 * most `maxRows` frozen records in all (so a client asking for many distinct pages of large rows cannot grow
 * it), in at most `maxEntries` pages; when full, the oldest pages make room.
 *
 * A page is kept the second time it is read under one stamp, not the first: one read once (a client paging
 * through, a crawler's walk over offsets) would cost freezing its rows and holding them until they are pushed
 * out, for nothing; one asked for again is the polled kind. Remembering that a page was read costs its key.
 * Pages are remembered only for as many rows as the cache holds: a walk repeated over more pages than fit
 * (a crawler cycling through 2,000 offsets) would otherwise have each page kept on its second read and pushed
 * out before its third, freezing and holding every row for nothing (measured: a sixth of an uncached page's
 * time went to the garbage collector). A page read again within that span will fit when kept.
 */
export class ListCache {
  private readonly entries = new Map<string, ListResult>();
  /** Totals of offset and page lists by filter: every page of one filter shares its count. */
  private readonly counts = new Map<string, number>();
  /** Characters of the keys in `counts`: a filter's values are the client's own, as long as its URL allows. */
  private countChars = 0;
  /** Pages read once under this stamp and not kept, with their rows: at most `maxEntries` pages and `maxRows` rows, the oldest forgotten first. */
  private readonly seen = new Map<string, number>();
  private seenRows = 0;
  /** Where the rows of offset pages read under this stamp stand (src/store/offset-seeks.ts). */
  private readonly seeks = new OffsetSeeks();
  private rows = 0;
  private stamp: number | string | undefined;
  /** JSON of frozen conditions and orders (a kept plan's, src/query/plan-memo.ts), by identity: keys are made per request. */
  private readonly texts = new WeakMap<object, string>();

  constructor(
    private readonly maxEntries = 1_000,
    private readonly maxRows = 10_000,
    private readonly maxPageRows = 101,
    /**
     * Counts kept at most, many more than pages: a count is one number under its filter's key, and a range filter
     * takes a value per client (`price.amount[gte]=<0…5400>`: 5,401 filters, whose counts pushed each other out of
     * the 1,000 pages' bound, so nearly every such page counted its rows again).
     */
    private readonly maxCounts = 20_000,
    /** Characters of count keys at most (2 MB of text at most, beside the entries themselves): a bound whatever the filters' length. */
    private readonly maxCountChars = 1_000_000,
  ) {}

  /** Call before every lookup with the current stamp; a different stamp empties the cache. */
  validate(stamp: number | string): void {
    if (stamp === this.stamp) return;
    this.entries.clear();
    this.counts.clear();
    this.countChars = 0;
    this.seen.clear();
    this.seenRows = 0;
    this.seeks.clear();
    this.rows = 0;
    this.stamp = stamp;
  }

  /** Whether a query's result may be kept (a small page). */
  keeps(query: ListQuery): boolean {
    return query.limit <= this.maxPageRows;
  }

  /** The key of a query on `resource`, or undefined when its result is not kept (a large page). */
  keyOf(resource: string, query: ListQuery): string | undefined {
    return this.keeps(query) ? this.pageKey(this.walkKey(resource, query), query) : undefined;
  }

  /**
   * `resource` and the query's conditions: what its count's key starts with, and (see walkKey) its page's and its
   * walk's. Made once per request; JSON texts joined by NUL, which no JSON text holds unescaped, so the parts cannot
   * run into each other.
   */
  private filterKey(resource: string, query: ListQuery): string {
    return `${resource} ${this.textOf(query.where)}`;
  }

  /** The filter's key and the query's order: a walk of offset pages (src/store/offset-seeks.ts), and what a page's key starts with. */
  walkKey(resource: string, query: ListQuery, filter = this.filterKey(resource, query)): string {
    return `${filter}\u0000${this.textOf(query.orderBy)}`;
  }

  private pageKey(walk: string, query: ListQuery): string {
    return `${walk}\u0000${JSON.stringify([query.limit, query.offset, query.after, query.search, query.withTotal])}`;
  }

  /** JSON.stringify(value), kept for a frozen value (it cannot change). */
  private textOf(value: object): string {
    let text = this.texts.get(value);
    if (text === undefined) {
      text = JSON.stringify(value);
      if (Object.isFrozen(value)) this.texts.set(value, text);
    }
    return text;
  }

  /**
   * A shared list read through the cache, as both stores do it: the page kept under `stamp` if there is one,
   * else `read` (its total from the kept count when there is one) and the page kept if it was read before — unless the stamp moved
   * while it read (PostgreSQL reads asynchronously), for a page read under one stamp must not be kept under another.
   */
  async through(
    resource: string,
    query: ListQuery,
    stamp: number | string,
    read: (query: ListQuery) => Promise<ListResult>,
    /** Offset pages may be read from a position learnt under this stamp: only where `read` reads the data the stamp names. */
    seeking = false,
  ): Promise<ListResult> {
    this.validate(stamp);
    const filter = this.filterKey(resource, query);
    const prefix = this.walkKey(resource, query, filter);
    const key = this.keeps(query) ? this.pageKey(prefix, query) : undefined;
    const cached = key === undefined ? undefined : this.entries.get(key);
    if (cached) return cached;
    const walk = seeking && OffsetSeeks.walks(query) ? prefix : undefined;
    const result = await this.counted(resource, query, stamp, walk === undefined ? read : (q) => this.sought(walk, q, stamp, read), filter);
    if (key === undefined || this.stamp !== stamp) return result;
    if (this.forget(key)) return this.set(key, result);
    this.remember(key, result.rows.length);
    return result;
  }

  /** Notes that the page `key` of `rows` rows was read once, making room by forgetting the oldest such notes. */
  private remember(key: string, rows: number): void {
    while (this.seen.size > 0 && (this.seen.size >= this.maxEntries || this.seenRows + rows > this.maxRows)) this.forget(this.seen.keys().next().value!);
    this.seen.set(key, rows);
    this.seenRows += rows;
  }

  /** Whether the page `key` had been read once; it is forgotten either way. */
  private forget(key: string): boolean {
    const rows = this.seen.get(key);
    if (rows === undefined) return false;
    this.seen.delete(key);
    this.seenRows -= rows;
    return true;
  }

  /** An offset page read from the nearest known position before it, and where its last row stands learnt. */
  private async sought(walk: string, query: ListQuery, stamp: number | string, read: (query: ListQuery) => Promise<ListResult>): Promise<ListResult> {
    const result = await read(this.seeks.from(walk, query));
    if (this.stamp === stamp) this.seeks.learn(walk, query, result);
    return result;
  }

  /**
   * A list's result with its total taken from the count kept for its filter (every page of a filter has the
   * same total until the stamp moves), `read` asked to count only when none is kept. An offset page read
   * anew then costs its page query alone.
   */
  async counted(
    resource: string,
    query: ListQuery,
    stamp: number | string,
    read: (query: ListQuery) => Promise<ListResult>,
    /** filterKey(resource, query), when the caller has made it already. */
    filter = this.filterKey(resource, query),
  ): Promise<ListResult> {
    if (!query.withTotal) return read(query);
    this.validate(stamp);
    // Every order of a filter has its count: the order is not part of the key.
    const key = `${filter}\u0000${JSON.stringify([query.search])}`;
    const total = this.counts.get(key);
    if (total !== undefined) return { ...(await read({ ...query, withTotal: false })), total };
    const result = await read(query);
    // Kept only under the stamp it was counted at: another call may have moved it while this one read.
    if (result.total !== undefined && this.stamp === stamp) this.keepCount(key, result.total);
    return result;
  }

  /** Keeps a filter's count, the oldest counts forgotten to make room (by number and by their keys' characters). */
  private keepCount(key: string, total: number): void {
    if (this.counts.has(key)) {
      this.counts.set(key, total);
      return;
    }
    if (key.length > this.maxCountChars) return;
    while (this.counts.size > 0 && (this.counts.size >= this.maxCounts || this.countChars + key.length > this.maxCountChars)) {
      const oldest = this.counts.keys().next().value!;
      this.counts.delete(oldest);
      this.countChars -= oldest.length;
    }
    this.counts.set(key, total);
    this.countChars += key.length;
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
