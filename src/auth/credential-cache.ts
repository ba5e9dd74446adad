// Caches what a credential resolves to (a key's principal, a token's client) until the store's credentials epoch moves.

interface Entry<V> {
  value: V;
  /** The credentials epoch the value was read at: at any other epoch it is void. */
  epoch: number;
  expires: number;
}

const MAX_ENTRIES = 10_000;

/**
 * Any committed credential change, in this process or another using the same database, moves the store's
 * credentials epoch (Store.credentialEpoch), and every entry read at an earlier epoch is void from the next
 * request on: a revoked or narrowed key, a demoted or deleted user, a deleted OAuth client. Reading the
 * epoch is cheap (kept in memory by the store), so a hit costs no query. The TTL only bounds how long an
 * entry may live at all. Callers read the epoch *before* looking a credential up, and store the value under
 * that epoch, so a change committed during the look-up voids the value at once.
 */
export class CredentialCache<V> {
  private readonly entries = new Map<string, Entry<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string, epoch: number): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.epoch !== epoch || e.expires <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, epoch: number): void {
    if (this.ttlMs <= 0) return;
    // Bounded: when full, the oldest entry (Map order is insertion order) makes room.
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, epoch, expires: this.now() + this.ttlMs });
  }
}
