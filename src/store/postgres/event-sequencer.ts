// Commit-ordered event sequences on PostgreSQL: events are stamped after their transaction commits, by one stamper at a time.
import type pg from 'pg';

/** Serialises stampers across every process of the deployment (a transaction-level advisory lock). */
const SEQUENCER_LOCK = 0x63657673; // "cevs"
/** The notification every process listens to: events up to the payload's sequence can be read. */
export const EVENTS_CHANNEL = 'canon_events';
const BATCH = 5_000;

/**
 * Stamps the oldest committed unstamped events after the high-water mark, in insertion order, and (only when it
 * stamped any) NOTIFYs the new mark, delivered to every listening process when, and only if, this commits.
 */
const STAMP = `BEGIN;
SELECT pg_advisory_xact_lock(${SEQUENCER_LOCK});
WITH pending AS (
  SELECT sequence, row_number() OVER (ORDER BY sequence) AS ord
  FROM (SELECT sequence FROM canon_events WHERE commit_sequence IS NULL ORDER BY sequence LIMIT ${BATCH}) AS oldest
), counter AS (
  UPDATE canon_event_sequencer SET last = last + (SELECT count(*) FROM pending) WHERE id = 1 AND EXISTS (SELECT 1 FROM pending) RETURNING last
), stamped AS (
  UPDATE canon_events AS e SET commit_sequence = c.last - (SELECT count(*) FROM pending) + p.ord FROM pending AS p, counter AS c WHERE e.sequence = p.sequence RETURNING e.sequence
)
SELECT s.n, pg_notify('${EVENTS_CHANNEL}', s.last::text), txid_current_if_assigned() AS xid FROM (SELECT (SELECT count(*) FROM stamped) AS n, (SELECT last FROM counter) AS last) AS s WHERE s.n > 0;`;

export const SEQUENCER_DDL = [
  'ALTER TABLE canon_events ADD COLUMN IF NOT EXISTS commit_sequence bigint',
  'CREATE UNIQUE INDEX IF NOT EXISTS ux_canon_events_commit_sequence ON canon_events (commit_sequence)',
  'CREATE INDEX IF NOT EXISTS ix_canon_events_unstamped ON canon_events (sequence) WHERE commit_sequence IS NULL',
  'CREATE INDEX IF NOT EXISTS ix_canon_events_owner ON canon_events (owner_id, commit_sequence)',
  'CREATE INDEX IF NOT EXISTS ix_canon_events_created ON canon_events (created_at)',
  // The high-water mark outlives the purge of every event, so the sequence never restarts below a reader's position.
  'CREATE TABLE IF NOT EXISTS canon_event_sequencer (id integer PRIMARY KEY CHECK (id = 1), last bigint NOT NULL)',
  'INSERT INTO canon_event_sequencer (id, last) VALUES (1, 0) ON CONFLICT (id) DO NOTHING',
];

/**
 * Why not the `bigserial`: PostgreSQL allocates it at insert, so two transactions can commit out of its
 * order, and a reader that resumed after N would never see the later-committed N-1 (DESIGN §9). Making
 * writers take a counter inside their transaction would serialise every write, fsync included.
 *
 * Instead an event is inserted unstamped; after commit, a stamper takes the advisory lock, reads the
 * committed unstamped events (READ COMMITTED: a fresh snapshot taken after the lock, so it sees everything
 * the previous stamper saw) and numbers them after the high-water mark, in insertion order, in one
 * transaction. Stamping transactions are serialised and each commits before the lock is released, so a
 * batch becomes visible whole and after every lower-numbered batch: readers of `commit_sequence > N` can
 * never miss a number. Each process stamps after its own commits (coalesced, off the request path); a
 * sweep in every process stamps what a writer that died after committing left behind.
 */
export class EventSequencer {
  private running: Promise<number> | undefined;
  private queued: Promise<number> | undefined;

  constructor(
    private readonly pool: pg.Pool,
    /** Told a stamping transaction's id before it commits (PgStore: OwnTransactions). */
    private readonly own: (xid: number) => void = () => undefined,
  ) {}

  /** Stamps every committed unstamped event; concurrent calls share one run plus at most one after it. */
  run(): Promise<number> {
    if (!this.running) {
      this.running = this.stampAll().finally(() => (this.running = undefined));
      return this.running;
    }
    // A call during a run may concern events committed after that run's snapshot: one more run follows.
    this.queued ??= this.running
      .catch(() => 0)
      .then(() => {
        this.queued = undefined;
        return this.run();
      });
    return this.queued;
  }

  private async stampAll(): Promise<number> {
    let total = 0;
    for (let round = 0; round < 1_000; round++) {
      const n = await this.stampBatch();
      total += n;
      if (n < BATCH) break;
    }
    return total;
  }

  /**
   * One batch in two round trips: the three statements go as one simple-protocol query (constants only, no
   * parameters), run in order in one transaction, then the COMMIT. Under READ COMMITTED each statement takes its own
   * snapshot when it starts, so the stamping statement's snapshot is taken once the lock is held, as the ordering
   * needs. The COMMIT waits for the answer so that the transaction's id, when it wrote, is known to this process
   * before anyone can see it committed: a snapshot moved by it alone then keeps the caches (OwnTransactions). An
   * error skips the rest of the text and leaves the transaction aborted: ROLLBACK ends it.
   */
  private async stampBatch(): Promise<number> {
    const client = await this.pool.connect();
    try {
      const results = (await client.query(STAMP)) as unknown as Array<{ rows: Array<{ n: string; xid: string | number | null }> }>;
      const row = results[2]?.rows[0];
      if (row?.xid !== undefined && row.xid !== null) this.own(Number(row.xid));
      await client.query('COMMIT');
      return Number(row?.n ?? 0);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}
