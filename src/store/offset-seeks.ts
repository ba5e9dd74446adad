// Offset pages read from the nearest row already seen under one change stamp: OFFSET n then costs the rows after a known position, not n rows.
import { valueAt } from '../lib/field-path.js';
import type { ListQuery, ListResult } from './types.js';

/** Known positions of one walk (a filter and an order), ascending, each with its row's sort key values. */
interface Walk {
  positions: number[];
  keys: unknown[][];
}

/** How many of the ascending `positions` are below `x`. */
function below(positions: readonly number[], x: number): number {
  let lo = 0;
  let hi = positions.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (positions[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * An engine reads OFFSET n by stepping over n rows (SQLite and PostgreSQL alike): a page at offset 1,000
 * cost SQLite about ten times a first page, most of an uncached page's time. Every page read tells where its
 * last row stands: the row at position `offset + rows - 1` has these sort values. A later page at offset n
 * of the same filter and order, while the data is unchanged, is the `n - p - 1` rows after the nearest known
 * position p < n: the same rows, since the order is total (it always ends with `id`), read with the keyset
 * clause cursors use (src/store/sql/queries.ts keysetClause) and a short OFFSET. A client paging through
 * (offset 0, 20, 40, …) then pays for each page alone, not for all the pages before it.
 *
 * Valid only under the stamp it was learnt at: the owner (src/store/list-cache.ts) clears it when the stamp
 * moves, and a store lets it be used only where the page is read in the snapshot the stamp names.
 */
export class OffsetSeeks {
  private readonly walks = new Map<string, Walk>();
  private held = 0;

  constructor(
    /** Positions kept in all; when full, everything is forgotten (it is learnt again from the next pages). */
    private readonly maxPositions = 20_000,
    /**
     * Walks kept in all, the same way: a walk's key holds its filter values, which a client chooses (up to the
     * URL's length), so their number is bounded apart from the positions.
     */
    private readonly maxWalks = 1_000,
  ) {}

  clear(): void {
    this.walks.clear();
    this.held = 0;
  }

  /**
   * Whether a query belongs to a walk (a filter and an order, whose key the caller makes: src/store/list-cache.ts):
   * not one that takes no offset (keyset pages, a search ranked by relevance).
   */
  static walks(query: ListQuery): boolean {
    return query.offset !== undefined && query.after === undefined && query.search === undefined;
  }

  /** `query` as read from the nearest known position before its offset; itself when none is known. */
  from(walk: string, query: ListQuery): ListQuery {
    const offset = query.offset ?? 0;
    const w = this.walks.get(walk);
    if (w === undefined || offset === 0) return query;
    // The greatest known position below `offset`.
    const lo = below(w.positions, offset);
    if (lo === 0) return query;
    const p = w.positions[lo - 1]!;
    const { offset: _skipped, ...rest } = query;
    const left = offset - p - 1;
    return left > 0 ? { ...rest, after: w.keys[lo - 1]!, offset: left } : { ...rest, after: w.keys[lo - 1]! };
  }

  /** Learns where the last row of a page read at `offset` stands. */
  learn(walk: string, query: ListQuery, result: ListResult): void {
    const last = result.rows[result.rows.length - 1];
    if (last === undefined) return;
    const position = (query.offset ?? 0) + result.rows.length - 1;
    const known = this.walks.get(walk);
    if (known !== undefined && known.positions[below(known.positions, position)] === position) return;
    // Past either bound everything is forgotten, this walk's positions too.
    if (this.held >= this.maxPositions || (known === undefined && this.walks.size >= this.maxWalks)) this.clear();
    let w = this.walks.get(walk);
    if (w === undefined) this.walks.set(walk, (w = { positions: [], keys: [] }));
    const at = below(w.positions, position);
    w.positions.splice(at, 0, position);
    w.keys.splice(
      at,
      0,
      query.orderBy.map((k) => valueAt(last, k.path)),
    );
    this.held++;
  }

  /** Positions held (tests). */
  get size(): number {
    return this.held;
  }
}
