// List results kept until the database changes, for callers that only read them: a page polled again costs no query.
import { deepFreeze } from '../../lib/deep-freeze.js';
import type { ListQuery, ListResult } from '../types.js';

/**
 * The same validity rule as the record cache (src/store/sqlite/record-cache.ts): one change stamp, which
 * moves on every commit of this process or another, empties it. A page is kept only when it is small
 * (keyset pages read one row more than they show), so the cache holds at most `maxEntries` pages of at most
 * `maxRows` frozen records; when full, the oldest page makes room.
 */
export class ListCache {
  private readonly entries = new Map<string, ListResult>();
  private stamp: number | undefined;

  constructor(
    private readonly maxEntries = 500,
    private readonly maxRows = 101,
  ) {}

  /** Call before every lookup with the current stamp; a different stamp empties the cache. */
  validate(stamp: number): void {
    if (stamp === this.stamp) return;
    this.entries.clear();
    this.stamp = stamp;
  }

  /** The key of a query on `resource`, or undefined when its result is not kept (a large page). */
  keyOf(resource: string, query: ListQuery): string | undefined {
    if (query.limit > this.maxRows) return undefined;
    return `${resource} ${JSON.stringify([query.where, query.orderBy, query.limit, query.offset, query.after, query.search, query.withTotal])}`;
  }

  get(key: string): ListResult | undefined {
    return this.entries.get(key);
  }

  /** Stores and returns the result, frozen with every row: every later reader shares it. */
  set(key: string, result: ListResult): ListResult {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, deepFreeze(result));
    return result;
  }
}
