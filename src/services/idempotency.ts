// Idempotency keys (DESIGN §11): a repeat replays the stored response; the record commits with the side effect.
import { createHash } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { open, seal } from '../auth/key-crypto.js';
import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors/app-error.js';
import { IDEMPOTENCY_KEYS } from '../platform/internal.js';
import { UniqueViolation, type Store, type StoredRecord, type Tx } from '../store/types.js';

/** What a replay sends back: the first response's status, headers and body. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export type Begun = { replay: StoredResponse } | { ticket: Ticket };

/** RFC-style token of 1–255 printable ASCII characters. */
const KEY = /^[\x20-\x7E]{1,255}$/;

/** JSON with object keys sorted at every level, so equal bodies fingerprint equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Raised inside the transaction when another process committed the same key first; the caller replays. */
export class IdempotencyRace extends Error {}

export class Ticket {
  constructor(private readonly owner: Idempotency, readonly scopeKey: string, readonly fingerprint: string) {}

  /** Writes the record in the side effect's own transaction: both commit, or neither. */
  async record(tx: Tx, response: StoredResponse): Promise<void> {
    await this.owner.write(tx, this, response);
  }

  release(): void {
    this.owner.release(this.scopeKey);
  }
}

export class Idempotency {
  /** Keys whose first request is running in this process: a concurrent repeat is 409 at once. */
  private readonly running = new Set<string>();

  constructor(private readonly store: Store, private readonly secret: string, private readonly ttlSeconds: number, private readonly clock: () => Date) {}

  /** The key is scoped to the principal: the user for user-bound credentials, else the credential. */
  private scopeOf(principal: Principal): string {
    return principal.userId ? `user:${principal.userId}` : `${principal.kind}:${principal.credentialId}`;
  }

  async begin(principal: Principal, key: string, request: { method: string; url: string; body: unknown }): Promise<Begun> {
    if (!KEY.test(key)) {
      throw new AppError('BAD_REQUEST', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', { details: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters', value: key }] });
    }
    const scopeKey = createHash('sha256').update(`${this.scopeOf(principal)}\n${key}`).digest('base64url');
    const fingerprint = createHash('sha256').update(`${request.method}\n${request.url}\n${canonicalJson(request.body ?? null)}`).digest('base64url');
    if (this.running.has(scopeKey)) throw inUse();
    const existing = await this.lookup(scopeKey);
    if (existing) return { replay: this.replayOf(existing, fingerprint) };
    // Checked again after the await: another request may have taken the key meanwhile.
    if (this.running.has(scopeKey)) throw inUse();
    this.running.add(scopeKey);
    return { ticket: new Ticket(this, scopeKey, fingerprint) };
  }

  /** After losing a race to another process: the committed record decides (replay, or 422 for another request). */
  async afterRace(ticket: Ticket): Promise<StoredResponse> {
    const existing = await this.lookup(ticket.scopeKey);
    if (!existing) throw inUse();
    return this.replayOf(existing, ticket.fingerprint);
  }

  release(scopeKey: string): void {
    this.running.delete(scopeKey);
  }

  private async lookup(scopeKey: string): Promise<StoredRecord | null> {
    const record = await this.store.findOne(IDEMPOTENCY_KEYS, [{ path: 'scope_key', op: 'eq', value: scopeKey }]);
    return record && Date.parse(String(record.expires_at)) > this.clock().getTime() ? record : null;
  }

  private replayOf(record: StoredRecord, fingerprint: string): StoredResponse {
    if (record.fingerprint !== fingerprint) {
      throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request; use a new key for a new request.');
    }
    return JSON.parse(open(String(record.response), this.secret)) as StoredResponse;
  }

  async write(tx: Tx, ticket: Ticket, response: StoredResponse): Promise<void> {
    const now = this.clock();
    // An expired record for the same key gives way to the new one.
    const stale = await tx.findOne(IDEMPOTENCY_KEYS, [{ path: 'scope_key', op: 'eq', value: ticket.scopeKey }]);
    if (stale && Date.parse(String(stale.expires_at)) <= now.getTime()) await tx.delete(IDEMPOTENCY_KEYS, stale.id);
    try {
      await tx.insert(IDEMPOTENCY_KEYS, {
        id: uuidv7(), version: 1, created_at: now.toISOString(), updated_at: now.toISOString(),
        scope_key: ticket.scopeKey, fingerprint: ticket.fingerprint,
        response: seal(JSON.stringify(response), this.secret),
        expires_at: new Date(now.getTime() + this.ttlSeconds * 1000).toISOString(),
      });
    } catch (err) {
      if (err instanceof UniqueViolation) throw new IdempotencyRace('another request with this key committed first');
      throw err;
    }
  }

  /** Deletes expired records, a bounded batch at a time; returns how many went. */
  async purge(batch = 500): Promise<number> {
    const now = this.clock().toISOString();
    return this.store.transaction(async (tx) => {
      const { rows } = await tx.list(IDEMPOTENCY_KEYS, { where: [{ path: 'expires_at', op: 'lte', value: now }], orderBy: [{ path: 'expires_at', desc: false }, { path: 'id', desc: false }], limit: batch });
      for (const r of rows) await tx.delete(IDEMPOTENCY_KEYS, r.id);
      return rows.length;
    });
  }
}

function inUse(): AppError {
  return new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still running; retry once it has finished.', { headers: { 'retry-after': '1' } });
}
