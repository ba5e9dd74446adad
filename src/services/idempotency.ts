// Idempotency keys (DESIGN §11): a repeat replays the stored response; the record commits with the side effect.
import { open, seal } from '../lib/key-crypto.js';
import { digest } from '../lib/secrets.js';
import type { Principal } from '../model/principal.js';
import { AppError } from '../errors/app-error.js';
import { UniqueViolation, type IdempotencyRecord, type Store, type Tx } from '../store/types.js';

/** What a replay sends back: the first response's status, headers and body. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  /** The body as serialised JSON: rendered once, then both sent and stored. */
  body: string;
  /** The body reveals a secret shown once (a new API key): it is stored sealed, and never sent again in clear by mistake. */
  sensitive?: boolean;
}

/** 1–255 printable ASCII characters (DESIGN §11); a loop, not a regular expression, as it runs on every keyed POST. */
function validKey(key: string): boolean {
  if (key.length < 1 || key.length > 255) return false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/**
 * True when `value` serialises canonically as it is: every object's keys already in sorted order at every
 * level, and nothing JSON.stringify would drop or turn into null (undefined, functions, symbols, toJSON).
 * Bodies that clients write with sorted keys, or that have one key per object, take this path.
 */
function alreadyCanonical(value: unknown): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!alreadyCanonical(value[i])) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return false;
  let previous: string | undefined;
  for (const key in value) {
    if (previous !== undefined && !(previous < key)) return false;
    if (!alreadyCanonical((value as Record<string, unknown>)[key])) return false;
    previous = key;
  }
  return true;
}

/** JSON with object keys sorted at every level, so equal bodies fingerprint equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  // Already in canonical order: one native JSON.stringify, a third of the cost of building it here.
  if (alreadyCanonical(value)) return JSON.stringify(value);
  return buildCanonical(value);
}

function buildCanonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  // Loops and string appends rather than map/join: this runs on every keyed POST.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + buildCanonical(value[i]);
    return out + ']';
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) out += (i === 0 ? '' : ',') + JSON.stringify(keys[i]) + ':' + buildCanonical(object[keys[i]!]);
  return out + '}';
}

/** Raised inside the transaction when another process committed the same key first; the caller replays. */
export class IdempotencyRace extends Error {}

/** Raised inside the transaction when the key already has a live response: the transaction ends, the response is sent again. */
export class Replay extends Error {
  constructor(readonly response: StoredResponse) {
    super('replay of a stored response');
  }
}

/** One keyed request while it runs: checks the key inside its transaction, then records its response there. */
export class Ticket {
  /** Whether `check` ran, i.e. the request got past authorization into its transaction. */
  checked = false;
  /** Whether this ticket holds its key in the process's in-flight set (released at the end). */
  private holding = false;

  constructor(
    private readonly owner: Idempotency,
    readonly scopeKey: string,
    readonly fingerprint: string,
  ) {}

  /**
   * First thing in the change's transaction once the caller is authorized, on the connection that will
   * write: a key still running in this process is 409; a live record is replayed (Replay) or, for another
   * request, refused (422); an expired one gives way. Looking up here, not in a read transaction of its
   * own before, saves that transaction's begin and end on every keyed POST; looking up only after the
   * authorization checks means a stored response never reaches a caller that may not make the request.
   */
  check(tx: Tx): Promise<void> {
    this.checked = true;
    // A transaction retried after a conflict checks again; the key is already ours then.
    if (!this.holding) {
      this.owner.hold(this.scopeKey);
      this.holding = true;
    }
    // Returned, not awaited: one promise fewer per keyed POST.
    return this.owner.check(tx, this);
  }

  /** Writes the record in the side effect's own transaction: both commit, or neither. */
  record(tx: Tx, response: StoredResponse): Promise<void> {
    return this.owner.write(tx, this, response);
  }

  release(): void {
    if (this.holding) this.owner.release(this.scopeKey);
    this.holding = false;
  }
}

export class Idempotency {
  /** Keys whose first request is running in this process: a concurrent repeat is 409 at once. */
  private readonly running = new Set<string>();

  /** Prefixed to what a fingerprint digests: see `begin`. Derived, so the secret itself is never hashed alongside request data. */
  private readonly fingerprintKey: string;

  constructor(
    private readonly store: Store,
    private readonly secret: string,
    private readonly ttlSeconds: number,
    private readonly clock: () => Date,
  ) {
    this.fingerprintKey = digest(`canon idempotency fingerprint\n${secret}`);
  }

  /** The key is scoped to the principal: the user for user-bound credentials, else the credential. */
  private scopeOf(principal: Principal): string {
    return principal.userId ? `user:${principal.userId}` : `${principal.kind}:${principal.credentialId}`;
  }

  /** Prepares the key for this request; nothing is looked up until the request is authorized (`Ticket.check`). */
  begin(principal: Principal, key: string, request: { method: string; url: string; body: unknown }): Ticket {
    if (!validKey(key)) {
      throw new AppError('BAD_REQUEST', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', {
        details: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters', value: key }],
      });
    }
    // The key as the client sent it, after its scope: keys are printable ASCII, so the newline cannot be
    // forged, and a key is no secret (it only ever replays to its own principal), so it needs no digest.
    const scopeKey = `${this.scopeOf(principal)}\n${key}`;
    // Keyed with a value derived from the server secret: a body may hold a password, and a plain SHA-256 of
    // it, kept 24 h, could be checked against guesses by whoever reads the table. Equality is all that is
    // asked of a fingerprint, so prefixing the key (rather than a full HMAC, 4x the cost) is enough.
    const fingerprint = digest(`${this.fingerprintKey}\n${request.method}\n${request.url}\n${canonicalJson(request.body ?? null)}`);
    return new Ticket(this, scopeKey, fingerprint);
  }

  /** Marks the key as running in this process: a concurrent repeat is 409 at once. */
  hold(scopeKey: string): void {
    if (this.running.has(scopeKey)) throw inUse();
    this.running.add(scopeKey);
  }

  async check(tx: Tx, ticket: Ticket): Promise<void> {
    const found = await tx.findIdempotency(ticket.scopeKey);
    if (!found) return;
    if (this.isLive(found)) throw new Replay(this.replayOf(found, ticket.fingerprint));
    // Expired: removed in this transaction, so the new record can take its key.
    await tx.deleteExpiredIdempotency(ticket.scopeKey, this.clock().getTime());
  }

  /**
   * For a request whose body was refused before its transaction began: a live record under its key for a
   * different request is 422 IDEMPOTENCY_KEY_REUSED, as if the key had been looked up first. A record of the
   * same request is never replayed from here: the request has not been authorized, and the body is
   * invalid now, so the caller gets the validation error.
   */
  async refuseReuse(ticket: Ticket): Promise<void> {
    const found = await this.store.findIdempotency(ticket.scopeKey);
    if (found && this.isLive(found) && found.fingerprint !== ticket.fingerprint) throw reused();
  }

  /** After losing a race to another process: the committed record decides (replay, or 422 for another request). */
  async afterRace(ticket: Ticket): Promise<StoredResponse> {
    const found = await this.store.findIdempotency(ticket.scopeKey);
    if (!found || !this.isLive(found)) throw inUse();
    return this.replayOf(found, ticket.fingerprint);
  }

  release(scopeKey: string): void {
    this.running.delete(scopeKey);
  }

  private isLive(record: IdempotencyRecord): boolean {
    return record.expiresAt > this.clock().getTime();
  }

  private replayOf(record: IdempotencyRecord, fingerprint: string): StoredResponse {
    if (record.fingerprint !== fingerprint) throw reused();
    // Plain JSON for ordinary responses; AES-GCM sealed (base64url, never starting with "{") for sensitive ones.
    const stored = JSON.parse(record.response.startsWith('{') ? record.response : open(record.response, this.secret)) as {
      status: number;
      headers: Record<string, string>;
      body: unknown;
    };
    // JSON.stringify gives back the very text it once produced: same keys, same order, same numbers.
    return { status: stored.status, headers: stored.headers, body: JSON.stringify(stored.body) };
  }

  async write(tx: Tx, ticket: Ticket, response: StoredResponse): Promise<void> {
    const now = this.clock().getTime();
    const { status, headers, body } = response;
    // The body is JSON already: spliced in as it is, not escaped again as a string.
    const json = `{"status":${status},"headers":${JSON.stringify(headers)},"body":${body}}`;
    try {
      await tx.insertIdempotency({
        scopeKey: ticket.scopeKey,
        fingerprint: ticket.fingerprint,
        // Sealing costs a cipher per request; only a response that reveals a secret needs it. The others
        // hold what the resource tables already hold in clear.
        response: response.sensitive ? seal(json, this.secret) : json,
        expiresAt: now + this.ttlSeconds * 1000,
      });
    } catch (err) {
      // Another process committed this key after `check` (PostgreSQL; SQLite has one writer at a time).
      if (err instanceof UniqueViolation) throw new IdempotencyRace('another request with this key committed first');
      throw err;
    }
  }

  /** Deletes expired records, oldest first, one bounded batch (see Store.purgeIdempotency); returns how many went. */
  purge(batch = 500): Promise<number> {
    return this.store.purgeIdempotency(this.clock().getTime(), batch);
  }

  /** Purges until a batch comes back short, at most `maxBatches` batches (a bounded loop); returns the total. */
  async purgeExpired(batch = 500, maxBatches = 100): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxBatches; i++) {
      const n = await this.purge(batch);
      total += n;
      if (n < batch) break;
    }
    return total;
  }
}

function inUse(): AppError {
  return new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still running; retry once it has finished.', { facts: { retryAfterSeconds: 1 } });
}

function reused(): AppError {
  return new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request; use a new key for a new request.');
}
