// Keeps this process's credentials epoch current through LISTEN/NOTIFY; while it is not listening, every caller reads the epoch from the table.
import type pg from 'pg';
import { CREDENTIAL_EPOCH_CHANNEL, READ_CREDENTIAL_EPOCH } from '../sql/credential-epoch.js';

/** Waits between attempts to listen again after a failure: from 250 ms, doubling, at most 30 s. */
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 30_000;

/**
 * A transaction that changes a credential bumps the epoch row and sends `NOTIFY canon_credentials, <epoch>`;
 * PostgreSQL delivers the notification to every listening session when (and only if) it commits. One
 * dedicated connection per process listens, so a cached credential costs no query per request.
 *
 * Listening starts on first use. Until it works — and whenever the connection is lost, until it is back —
 * `current()` answers with a query: slower, never stale. The epoch is read again right after `LISTEN`, so a
 * change committed while nobody listened is not missed. No timer runs: a later call retries, with backoff.
 * What remains is the notification's own delivery time (PostgreSQL to this process, one local hop), which
 * a request that must first reach another process over HTTP after the commit does not beat in practice.
 */
export class EpochWatch {
  private epoch = 0;
  private listening = false;
  private client: pg.Client | undefined;
  private connecting = false;
  private closed = false;
  private retryAt = 0;
  private retryMs = FIRST_RETRY_MS;

  constructor(
    private readonly newClient: () => pg.Client,
    private readonly pool: pg.Pool,
  ) {}

  current(): number | Promise<number> {
    if (this.listening) return this.epoch;
    this.listen();
    return this.read(this.pool);
  }

  /** An epoch this process committed itself: known before its own notification comes back. */
  seen(epoch: number): void {
    if (epoch > this.epoch) this.epoch = epoch;
  }

  private async read(db: pg.Pool | pg.Client): Promise<number> {
    const { rows } = await db.query(READ_CREDENTIAL_EPOCH);
    this.seen(Number((rows[0] as { epoch: string | number }).epoch));
    return this.epoch;
  }

  private listen(): void {
    if (this.closed || this.connecting || Date.now() < this.retryAt) return;
    this.connecting = true;
    const client = this.newClient();
    client.on('notification', (n) => {
      if (n.channel === CREDENTIAL_EPOCH_CHANNEL && n.payload) this.seen(Number(n.payload));
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    void (async () => {
      try {
        await client.connect();
        await client.query(`LISTEN ${CREDENTIAL_EPOCH_CHANNEL}`);
        await this.read(client);
        if (this.closed) throw new Error('closed');
        this.client = client;
        this.listening = true;
        this.retryMs = FIRST_RETRY_MS;
      } catch {
        this.lost(client);
      } finally {
        this.connecting = false;
      }
    })();
  }

  /** The connection failed or ended: callers read the table again until a later call listens anew. */
  private lost(client: pg.Client): void {
    if (this.client === client) {
      this.client = undefined;
      this.listening = false;
    }
    this.retryAt = Date.now() + this.retryMs;
    this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
    client.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
