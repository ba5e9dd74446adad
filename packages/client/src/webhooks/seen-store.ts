// Where a webhook receiver remembers the delivery ids it has handled (delivery is at-least-once, DESIGN §9: deduplicate by webhook-id), and the bounded in-memory default.

/**
 * Remembers delivery ids. `add` must be atomic per id: two concurrent deliveries of one id get `true` once.
 * A store shared by several receiver processes (Redis `SET canon:webhook:<id> 1 NX EX 86400`, a unique key in
 * a database) deduplicates across them; the in-memory default only within its process.
 */
export interface SeenStore {
  /** Records `id`; true when it was new (handle the delivery), false when it was recorded before (a duplicate). */
  add(id: string): boolean | Promise<boolean>;
}

export interface MemorySeenStoreOptions {
  /** The most ids kept; past it the oldest is forgotten (default 10,000). */
  maxEntries?: number;
  /** How long an id is kept, in milliseconds (default 24 h; Canon's duplicates come within its retry schedule). */
  maxAgeMs?: number;
  /** The current time in milliseconds (default `Date.now`): inject a clock in tests. */
  now?: () => number;
}

const DEFAULT_MAX_ENTRIES = 10_000;
const DEFAULT_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** The in-memory default: bounded in entries and in age, so a busy receiver's memory stays flat. */
export class MemorySeenStore implements SeenStore {
  /** Id → when it was recorded; a Map iterates in insertion order, so the oldest is first. */
  private readonly ids = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(options: MemorySeenStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
    this.now = options.now ?? Date.now;
    if (!Number.isSafeInteger(this.maxEntries) || this.maxEntries < 1) throw new RangeError(`maxEntries is a whole number of at least 1, not ${this.maxEntries}`);
    if (!(this.maxAgeMs > 0)) throw new RangeError(`maxAgeMs is a positive number of milliseconds, not ${this.maxAgeMs}`);
  }

  /** How many ids are remembered now. */
  get size(): number {
    return this.ids.size;
  }

  add(id: string): boolean {
    const now = this.now();
    // Entries are in the order they were recorded: the expired ones are at the front.
    for (const [oldest, at] of this.ids) {
      if (now - at < this.maxAgeMs) break;
      this.ids.delete(oldest);
    }
    if (this.ids.has(id)) return false;
    this.ids.set(id, now);
    if (this.ids.size > this.maxEntries) this.ids.delete(this.ids.keys().next().value!);
    return true;
  }
}
