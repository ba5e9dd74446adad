// The optional ETag cache: the last 200 of each GET URL kept with its validator, so a repeat asks `If-None-Match` and a 304 is answered from memory (RFC 9110 §13.1.2, RFC 9111 §4.3).

export interface CachedAnswer {
  etag: string;
  /** The body's text; parsed afresh on every hit, so callers never share (and mutate) one object. */
  text: string;
}

/** A bounded map in recency order: a hit moves its entry to the end, a full cache drops the least recently used. */
export class EtagCache {
  private readonly entries = new Map<string, CachedAnswer>();

  constructor(readonly maxEntries = 500) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new TypeError(`cache.maxEntries must be a positive integer, not ${String(maxEntries)}`);
  }

  get(url: string): CachedAnswer | undefined {
    const hit = this.entries.get(url);
    if (hit !== undefined) {
      this.entries.delete(url);
      this.entries.set(url, hit);
    }
    return hit;
  }

  set(url: string, answer: CachedAnswer): void {
    this.entries.delete(url);
    this.entries.set(url, answer);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(url: string): void {
    this.entries.delete(url);
  }

  get size(): number {
    return this.entries.size;
  }
}
