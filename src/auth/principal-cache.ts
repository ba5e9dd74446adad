// Caches API-key principals briefly; committed events (local at once, other processes through the fan-out) evict them.
import type { StoredEvent } from '../store/types.js';
import type { Principal } from './principal.js';

interface Entry {
  principal: Principal;
  expires: number;
}

const MAX_ENTRIES = 10_000;

export class PrincipalCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly ttlMs: number, private readonly now: () => number = Date.now) {}

  get(key: string): Principal | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.principal;
  }

  set(key: string, principal: Principal): void {
    if (this.ttlMs <= 0) return;
    // Bounded: when full, the oldest entry (Map order is insertion order) makes room.
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { principal, expires: this.now() + this.ttlMs });
  }

  /**
   * Drops what the events make stale: a changed or deleted key, or any key of a changed or deleted
   * user (its role may have changed). The TTL bounds staleness when events cannot arrive.
   */
  invalidate(events: StoredEvent[], apiKeys: string, users: string): void {
    for (const e of events) {
      if (e.resource !== apiKeys && e.resource !== users) continue;
      for (const [hash, entry] of this.entries) {
        const p = entry.principal;
        if ((e.resource === apiKeys && p.credentialId === e.object_id) || (e.resource === users && p.userId === e.object_id)) this.entries.delete(hash);
      }
    }
  }
}
