// A bounded cache of prepared statements by SQL text: the least recently used give way, and what leaves is handed on to be released.

interface Entry<T> {
  value: T;
  /** Used since the eviction hand last passed it (a second chance, as in the CLOCK algorithm). */
  used: boolean;
}

/**
 * Clients shape list SQL (filters, sorts), so a cache keyed by SQL text grows with what they send unless it is
 * bounded. Eviction is CLOCK-like: a hit only sets a flag (no reordering on the hot path), and a full cache
 * evicts the oldest entry not used since it was last passed over, giving used ones a second chance at the
 * back. Statements the model's own queries need keep being used and stay; what is evicted goes to `evicted`,
 * which must release it safely (src/store/sqlite/native-handles.ts: a better-sqlite3 statement must not
 * simply be dropped).
 */
export class StatementCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    readonly max: number,
    private readonly evicted: (value: T) => void,
  ) {
    if (!Number.isInteger(max) || max < 1) throw new Error(`a statement cache holds at least 1 statement, not ${max}`);
  }

  get(sql: string): T | undefined {
    const entry = this.entries.get(sql);
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.value;
  }

  /** Adds `sql`'s statement, or replaces its entry (one holding the same statement, read again: nothing is evicted). */
  set(sql: string, value: T): void {
    const old = this.entries.get(sql);
    if (old !== undefined) {
      old.value = value;
      old.used = true;
      return;
    }
    if (this.entries.size >= this.max) this.evictOne();
    this.entries.set(sql, { value, used: false });
  }

  /** Statements held. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The oldest entry not used since the hand passed it goes. Used ones move to the back with the flag cleared,
   * so each is passed at most once per eviction: at worst one full turn, amortised one step per eviction.
   */
  private evictOne(): void {
    for (const [sql, entry] of this.entries) {
      this.entries.delete(sql);
      if (entry.used) {
        entry.used = false;
        this.entries.set(sql, entry);
        continue;
      }
      this.evicted(entry.value);
      return;
    }
  }
}
