// GraphQL answers kept until the data changes (issue 29, Performance): a query polled again by the same caller is answered without running it.
import type { Principal } from '../model/principal.js';

/** Bounds of one cache: answers kept, their text in all (UTF-16 units, keys included), and the largest one kept. */
export interface AnswerCacheLimits {
  maxEntries: number;
  maxChars: number;
  maxAnswerChars: number;
  /** Variables longer than this (as JSON) are not kept: they would cost more to hold than to run. */
  maxKeyChars: number;
}

const DEFAULT_LIMITS: AnswerCacheLimits = { maxEntries: 1_000, maxChars: 8_000_000, maxAnswerChars: 256_000, maxKeyChars: 16_000 };

/** What of a principal decides what it may see (DESIGN §8: scopes, role, ownership), as text, per principal object. */
const principalTexts = new WeakMap<Principal, string>();

function principalText(p: Principal): string {
  let text = principalTexts.get(p);
  if (text === undefined) {
    text = JSON.stringify([p.kind, p.credentialId, p.userId, p.role, p.scopes, p.apiVersion ?? null]);
    principalTexts.set(p, text);
  }
  return text;
}

/**
 * A query's answer is a function of the operation (its text, its name, its variables), of the caller (what its
 * principal may see) and of the stored data, and of nothing else: no resolver reads the clock, a request header
 * or another process's memory (src/graphql/engine-services.ts). So an answer may be given again, byte for byte,
 * while the store's stamp (Store.readStamp) reads what it read before and after the answer was computed: no
 * commit anywhere came between. A different stamp empties the cache, as REST's list cache is emptied
 * (src/store/list-cache.ts). Kept: answers with data and no error, to queries (never a mutation or a
 * subscription); a refusal or a field error is computed again, as is any answer to another caller.
 *
 * An answer is kept the second time it is asked for, not the first: a client varying its text on
 * every request (literals instead of variables) or walking pages costs nothing but a key. Bounded by entries and
 * by text; when full, the oldest make room.
 */
export class AnswerCache {
  private readonly entries = new Map<string, string>();
  /** Keys asked for once and not kept since (at most `maxEntries`, then it starts over). */
  private readonly seen = new Set<string>();
  private chars = 0;
  private stamp: number | string | undefined;
  /** What the cache did (tests prove which requests it answered). */
  readonly stats = { hits: 0, kept: 0 };

  constructor(private readonly limits: AnswerCacheLimits = DEFAULT_LIMITS) {}

  /**
   * Short numbers for the documents and callers of the keys: a key is looked up on every request, and a short one
   * hashes faster than the operation's text. A document is the engine's kept parse of one text (the same object
   * while kept); a caller is what its principal may see.
   * Numbers are never given twice; callers' start over (and the answers with them) when full.
   */
  private readonly documentIds = new WeakMap<object, number>();
  private readonly callerIds = new Map<string, number>();
  private nextId = 0;

  /** The key of one operation (its kept document) for one caller; undefined when its variables are too long to keep. */
  keyOf(principal: Principal, document: object, operationName: string | null | undefined, variables: Record<string, unknown>): string | undefined {
    let documentId = this.documentIds.get(document);
    if (documentId === undefined) this.documentIds.set(document, (documentId = this.nextId++));
    const caller = principalText(principal);
    let callerId = this.callerIds.get(caller);
    if (callerId === undefined) {
      if (this.callerIds.size >= this.limits.maxEntries) {
        // Answers under the numbers given so far could no longer be asked for: they go with their numbers.
        this.callerIds.clear();
        this.forget();
      }
      this.callerIds.set(caller, (callerId = this.nextId++));
    }
    let values = '';
    for (const _ in variables) {
      values = JSON.stringify(variables);
      break;
    }
    if (values.length > this.limits.maxKeyChars) return undefined;
    return `${documentId} ${callerId} ${operationName ?? ''} ${values}`;
  }

  /** Drops every answer and every key seen (numbers are never given twice, so a key made before still names what it did). */
  private forget(): void {
    this.entries.clear();
    this.seen.clear();
    this.chars = 0;
  }

  /** The answer kept for `key` under `stamp`; a stamp other than the last one seen empties the cache first. */
  get(stamp: number | string, key: string): string | undefined {
    if (stamp !== this.stamp) {
      // Keys asked for stay remembered: a query polled before the change is kept again on its next ask.
      this.entries.clear();
      this.chars = 0;
      this.stamp = stamp;
    }
    const kept = this.entries.get(key);
    if (kept !== undefined) this.stats.hits++;
    return kept;
  }

  /**
   * True, and remembered, when `key` is neither kept nor was asked for since the cache last emptied: then its answer
   * is computed without reading the stamp (on PostgreSQL a round trip), for nothing would be looked up or kept.
   */
  first(key: string): boolean {
    if (this.entries.has(key) || this.seen.has(key)) return false;
    this.remember(key);
    return true;
  }

  private remember(key: string): void {
    if (this.seen.size >= this.limits.maxEntries) this.seen.clear();
    this.seen.add(key);
  }

  /** Whether an answer computed now for `key` is worth keeping: it was asked for before. */
  wanted(key: string): boolean {
    if (this.seen.delete(key)) return true;
    this.remember(key);
    return false;
  }

  /** Keeps `answer` for `key` if the stamp read before it was computed (`before`) and after it (`after`) are the current one. */
  keep(before: number | string, after: number | string | undefined, key: string, answer: string): void {
    if (before !== this.stamp || after !== this.stamp) return;
    const size = key.length + answer.length;
    if (answer.length > this.limits.maxAnswerChars || size > this.limits.maxChars) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.chars -= key.length + previous.length;
    }
    for (const [oldKey, oldAnswer] of this.entries) {
      if (this.entries.size < this.limits.maxEntries && this.chars + size <= this.limits.maxChars) break;
      this.entries.delete(oldKey);
      this.chars -= oldKey.length + oldAnswer.length;
    }
    this.entries.set(key, answer);
    this.chars += size;
    this.stats.kept++;
  }
}
