// Reads the credentials epoch and the database's snapshot for every caller of a moment with one query: strict (a change committed before the call is always seen), and cheap under load.
import type pg from 'pg';

/**
 * The epoch, and the snapshot of the same statement: `xmin:xmax:in-progress xids`. Two equal snapshots make
 * the same transactions visible, so while it reads the same, no write has committed (or begun) anywhere in
 * the database since: the list cache's stamp (PgStore.list). `txid_current_snapshot` and not the newer
 * `pg_current_snapshot`, which PostgreSQL 12 lacks.
 */
export const READ_EPOCH_AND_SNAPSHOT = 'SELECT epoch, txid_current_snapshot()::text AS snapshot FROM canon_credential_epoch WHERE id = 1';

/** What one read returns to everyone who waited for it. */
export interface EpochRead {
  epoch: number;
  snapshot: string;
}

/** Waits before connecting the dedicated reader again after a failure: from 250 ms, doubling, at most 30 s. */
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 30_000;

interface Waiter {
  resolve: (read: EpochRead) => void;
  reject: (err: unknown) => void;
}

/**
 * Issue 12.4 wants a revoked credential refused by every process from the next request on. A cached epoch
 * kept current by `LISTEN/NOTIFY` cannot promise that: the notification travels PostgreSQL → this process on
 * its own connection, and on a loaded machine a request sent after the revoking response arrived first.
 * Only a read that starts after the caller arrived is sure to see every commit before it.
 *
 * So every call waits for such a read, but callers share them: one read is in flight at a time, and every
 * caller that arrived while it was on the wire waits for the next one, sent as soon as it returns. Under
 * load that is one short query per round trip for all requests together, not one per request. Reads go
 * over a dedicated connection, so they never queue behind the pool's work; while it is not connected
 * they go through the pool, and the connection is tried again with backoff.
 */
export class EpochReader {
  private epoch = 0;
  /** The last read that answered, and when it was sent (performance.now()): a request that arrived before that may use it. */
  private last: { read: EpochRead; sentAt: number } | undefined;
  private waiting: Waiter[] = [];
  private inFlight = false;
  private client: pg.Client | undefined;
  private connecting = false;
  private retryAt = 0;
  private retryMs = FIRST_RETRY_MS;
  private closed = false;

  constructor(
    private readonly newClient: () => pg.Client,
    private readonly pool: pg.Pool,
    /**
     * The read as sent: named by the store (src/store/postgres/statements.ts), it is parsed and planned once per
     * connection; as plain text, PostgreSQL parsed and planned it at every read (34 µs of planning each, one read for
     * about six requests of the mixed benchmark).
     */
    private readonly statement: pg.QueryConfig | string = READ_EPOCH_AND_SNAPSHOT,
  ) {}

  async current(): Promise<number> {
    return (await this.next()).epoch;
  }

  /** The database's snapshot as of a read sent after this call (see READ_EPOCH_AND_SNAPSHOT). */
  async snapshot(): Promise<string> {
    return (await this.next()).snapshot;
  }

  /**
   * The last read's answer when it was sent after `since` (performance.now()), else undefined: for a request that
   * arrived at `since`, it sees every commit made before the request, as a read sent now would (issue 31.3: the
   * read authentication waited for also stamps the request's record and page reads, one round trip in all).
   */
  readSince(since: number): EpochRead | undefined {
    const last = this.last;
    return last !== undefined && last.sentAt > since ? last.read : undefined;
  }

  /** The last read that answered (undefined before the first): a stamp for data read after it, if it is still the last when that read ends. */
  get latest(): EpochRead | undefined {
    return this.last?.read;
  }

  private next(): Promise<EpochRead> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.inFlight) this.flush();
    });
  }

  /** An epoch this process committed itself: never answer below it, whatever a read raced with. */
  seen(epoch: number): void {
    if (epoch > this.epoch) this.epoch = epoch;
  }

  private flush(): void {
    const batch = this.waiting;
    this.waiting = [];
    this.inFlight = true;
    this.read()
      .then(
        (read) => {
          for (const w of batch) w.resolve(read);
        },
        (err: unknown) => {
          for (const w of batch) w.reject(err);
        },
      )
      .finally(() => {
        this.inFlight = false;
        if (this.waiting.length > 0) this.flush();
      });
  }

  private async read(): Promise<EpochRead> {
    const db = this.client ?? this.connectLater();
    try {
      const sentAt = performance.now();
      const { rows } = await db.query(this.statement);
      const row = rows[0] as { epoch: string | number; snapshot: string };
      this.seen(Number(row.epoch));
      const read = { epoch: this.epoch, snapshot: row.snapshot };
      if (this.last === undefined || sentAt > this.last.sentAt) this.last = { read, sentAt };
      return read;
    } catch (err) {
      // The dedicated connection broke mid-read: this batch reads through the pool rather than fail.
      if (db === this.pool) throw err;
      this.lost(db as pg.Client);
      return this.read();
    }
  }

  /** The pool for now; the dedicated connection starts in the background, unless a retry is not due. */
  private connectLater(): pg.Pool {
    if (this.closed || this.connecting || Date.now() < this.retryAt) return this.pool;
    this.connecting = true;
    const client = this.newClient();
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client
      .connect()
      .then(() => {
        if (this.closed) throw new Error('closed');
        this.client = client;
        this.retryMs = FIRST_RETRY_MS;
      })
      .catch(() => this.lost(client))
      .finally(() => {
        this.connecting = false;
      });
    return this.pool;
  }

  private lost(client: pg.Client): void {
    if (this.client === client) this.client = undefined;
    this.retryAt = Date.now() + this.retryMs;
    this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
    client.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
