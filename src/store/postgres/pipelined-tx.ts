// A PostgreSQL transaction in fewer round trips: BEGIN goes out with the first statement, and statements whose results nobody reads (the event) with the next one or the COMMIT, pipelined on one connection.
import type pg from 'pg';

type QueryConfig = pg.QueryConfig<unknown[]>;

/** A statement waiting to go out with the next one; `answered` is handed its result (a failure fails the COMMIT). */
interface Outgoing {
  config: QueryConfig | string;
  values?: unknown[];
  answered?: (result: pg.QueryResult) => void;
}

/**
 * Every statement of a transaction was a round trip: BEGIN, the row lock, the change, its event, COMMIT (five for an
 * update), each a write and a wait on both sides. On a connection in pipeline mode (node-postgres ≥ 8.21, `pipeline:
 * true`: a query is sent without waiting for the ones before it, results come back in order) this sends:
 *
 * - BEGIN only with the transaction's first statement, in the same write (none at all for a transaction that sent
 *   nothing);
 * - a `deferred` statement (the event's INSERT: its result is never read) with whatever follows it: the next
 *   statement, or the COMMIT.
 *
 * An update is then three round trips, a create two. Statements still run in the order they were asked for, in one
 * transaction. Failures: a statement's error is its caller's as before; a deferred statement's error fails the
 * COMMIT (PostgreSQL answers a COMMIT of a failed transaction with ROLLBACK, which is checked too), so nothing is
 * reported committed that was not. BEGIN's own error is its first statement's; a BEGIN that failed while the
 * statement behind it ran on is not possible short of a broken connection, which fails both.
 */
export class PipelinedTx {
  /** Deferred statements not sent yet: they go with the next statement or the COMMIT. */
  private outbox: Outgoing[] = [];
  /** Whether BEGIN went out (with the first statement). */
  private began = false;
  /** Sent statements whose results nobody awaited (BEGIN, the deferred): the COMMIT counts only if they held. */
  private readonly owed: Array<Promise<unknown>> = [];

  constructor(private readonly client: pg.PoolClient) {}

  query(config: QueryConfig | string, values?: unknown[]): Promise<pg.QueryResult> {
    return this.send(config, values);
  }

  /**
   * A statement nobody waits for: sent with the next statement or the COMMIT, its failure failing the COMMIT, its result
   * handed to `answered` (before the next statement's, which PostgreSQL answers after it).
   */
  deferred(config: QueryConfig | string, values?: unknown[], answered?: (result: pg.QueryResult) => void): void {
    this.outbox.push({ config, values, answered });
  }

  /** Commits what was asked for (nothing, when nothing was): resolves once PostgreSQL has. */
  async commit(): Promise<void> {
    if (!this.began && this.outbox.length === 0) return;
    const commit = this.send('COMMIT');
    commit.catch(() => undefined);
    // In the order sent: a failure before the COMMIT is the transaction's, and the COMMIT then rolled back.
    for (const p of this.owed) await p;
    const result = await commit;
    if (result.command !== 'COMMIT') throw new Error(`COMMIT answered ${result.command}: the transaction was rolled back`);
  }

  /** Rolls back what was sent; statements not sent yet are dropped. */
  async rollback(): Promise<void> {
    this.outbox = [];
    if (this.began) await this.client.query('ROLLBACK');
  }

  /** BEGIN when not yet sent, the outbox, then this statement: one write to the socket where the connection lets us gather them. */
  private send(config: QueryConfig | string, values?: unknown[]): Promise<pg.QueryResult> {
    const ahead: Outgoing[] = this.began ? this.outbox : [{ config: 'BEGIN' }, ...this.outbox];
    this.outbox = [];
    this.began = true;
    if (ahead.length === 0) return this.client.query(config, values);
    const stream = (this.client as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection?.stream;
    const gather = typeof stream?.cork === 'function' && typeof stream.uncork === 'function';
    if (gather) stream.cork!();
    try {
      const sent = ahead.map((q) => {
        const p = this.client.query(q.config, q.values);
        if (q.answered !== undefined) p.then(q.answered, () => undefined);
        // Awaited by the statement behind it and by the COMMIT: never an unhandled rejection.
        p.catch(() => undefined);
        return p;
      });
      this.owed.push(...sent);
      const result = this.client.query(config, values);
      // The statement's answer counts only if what went before it held (BEGIN, a deferred statement).
      return Promise.all([...sent, result]).then(() => result);
    } finally {
      if (gather) stream.uncork!();
    }
  }
}
