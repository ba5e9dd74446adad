// One LISTEN connection per process for a notification channel, reconnecting with backoff; listeners are only woken, never told what changed.
import type pg from 'pg';

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 30_000;

/**
 * A hint channel: a notification lost while the connection is down is covered by the readers' own
 * polling, so this class never reads state itself. On (re)connect it wakes every listener once, since
 * something may have happened while nobody listened.
 */
export class ChannelListener {
  private readonly listeners = new Set<() => void>();
  private client: pg.Client | undefined;
  private retryMs = FIRST_RETRY_MS;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly channel: string,
    private readonly newClient: () => pg.Client,
  ) {}

  add(listener: () => void): () => void {
    this.listeners.add(listener);
    if (!this.client && !this.timer) this.connect();
    return () => {
      this.listeners.delete(listener);
    };
  }

  private wake(): void {
    for (const listener of this.listeners) listener();
  }

  private connect(): void {
    if (this.closed) return;
    const client = this.newClient();
    this.client = client;
    client.on('notification', (n) => {
      if (n.channel === this.channel) this.wake();
    });
    const lost = (): void => {
      if (this.client !== client) return;
      this.client = undefined;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.connect();
      }, this.retryMs);
      this.timer.unref();
      this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
    };
    client.on('error', lost);
    client.on('end', lost);
    client
      .connect()
      .then(() => client.query(`LISTEN ${this.channel}`))
      .then(() => {
        this.retryMs = FIRST_RETRY_MS;
        this.wake();
      })
      .catch(lost);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
