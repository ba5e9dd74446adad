// Group commit for SQLite: transactions that queue while one runs share the next BEGIN … COMMIT, each in a savepoint of its own, so one fsync makes a whole group durable.
import { StoreBusy } from '../types.js';
import type { Connection } from './sqlite-ops.js';

/** Another process (sharing the file) holding the write lock longer than this fails a write with StoreBusy: 503, Retry-After. */
export const BUSY_TIMEOUT_MS = 5_000;
/** The longest pause between two tries for the write lock. */
const MAX_BUSY_WAIT_MS = 50;

/** What must follow the transaction's fate beside SQLite: the idempotency directory's pending rows. */
export interface GroupHooks {
  begin(): void;
  commit(): void;
  rollback(): void;
  /** A position in what the open transaction added, and a way back to it (a member's savepoint rolled back). */
  mark(): unknown;
  undoTo(mark: unknown): void;
}

interface Member {
  fn: () => Promise<unknown>;
  /** When it was queued (performance.now()): the busy timeout counts from there, however long earlier groups took. */
  arrived: number;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/**
 * With `synchronous=FULL` every COMMIT waits for the disk (about half a millisecond here, with the event
 * loop blocked: better-sqlite3 is synchronous), which bounded writes to some 1,800 commits a second
 * whatever else they cost. Writes that arrive while a transaction runs now wait for it as before (the
 * store has one write connection), then run one after another inside one transaction, each in a savepoint:
 * a member that throws is rolled back to its savepoint alone and its caller gets its error at once; the
 * others are answered only after the group's COMMIT returned and the WAL was synced (wal-sync.ts: off the event
 * loop; the next group starts once the sync is done), so nothing is acknowledged before it is on disk —
 * durability is exactly as before, fewer fsyncs carry it (https://sqlite.org/lang_savepoint.html).
 *
 * The order is the queue's, and a member sees its predecessors' writes, as it would had they committed
 * first. If SQLite itself ends the transaction (an I/O error or a full disk roll it back whole), every
 * member that ran is refused with that error and the members not yet run go to the next group. A group of
 * one runs as a plain transaction, without a savepoint.
 */
export class GroupCommit {
  private readonly queue: Member[] = [];
  private draining = false;
  private scheduled = false;

  constructor(
    private readonly conn: Connection,
    private readonly hooks: GroupHooks,
    /** Runs a group with the store's write lock held (the same lock plain reads look at). */
    private readonly exclusive: <T>(body: () => Promise<T>) => Promise<T>,
    /**
     * Called after a COMMIT that changed rows, before any member is answered. A transaction that changed
     * nothing (the embedded worker's polls find no work once a second) moves nothing: the caches stamped by
     * commits stay valid.
     */
    private readonly committed: () => void,
    /**
     * How long a group waits for another process's write lock (a file shared by processes) before its members are
     * refused with StoreBusy; null when no other connection can hold it (`:memory:`): a plain BEGIN IMMEDIATE.
     */
    private readonly busyTimeoutMs: number | null = BUSY_TIMEOUT_MS,
    /**
     * Resolves once what was committed before the call is on disk (src/store/sqlite/wal-sync.ts); null when COMMIT
     * itself is as durable as the store promises (`:memory:`, `synchronous=normal`). Members are answered after it,
     * and the next group after that (the event loop runs on meanwhile).
     */
    private readonly durable: (() => Promise<void>) | null = null,
    private readonly maxMembers = 64,
  ) {}

  /**
   * A group starts on the turn after its first member arrived (setImmediate: after the event loop's poll
   * phase), not at once: a write's transaction runs in microtasks, so started at once it would always be
   * alone, done before the next request was even read. Every write whose request was read in the same poll
   * phase joins it; a lone write waits one turn of the loop.
   */
  run<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, arrived: performance.now(), resolve: resolve as (value: unknown) => void, reject });
      if (!this.draining && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          void this.drain();
        });
      }
    });
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, this.maxMembers);
        try {
          const committed = await this.exclusive(() => this.runGroup(group));
          // The next group waits for this one's sync (the event loop does not: reads go on meanwhile), so the writes
          // arriving meanwhile share one COMMIT and one sync. Starting it at once, its sync overlapping ours, was
          // measured: smaller groups, more commits and syncs per write, 15% more CPU per POST (docs/BENCHMARKS.md).
          await this.answer(committed);
        } catch (err) {
          // Only a failing ROLLBACK gets here: end what is left of the transaction and answer everyone
          // (settling a member twice does nothing), rather than leave a caller waiting forever.
          this.abandon(group, err);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** Answers the members a COMMIT kept, once it is durable (see `durable`); a failed sync refuses them all. Never rejects. */
  private async answer(committed: ReadonlyArray<{ member: Member; value: unknown }>): Promise<void> {
    if (committed.length === 0) return;
    if (this.durable === null) {
      for (const d of committed) d.member.resolve(d.value);
      return;
    }
    await this.durable().then(
      () => {
        for (const d of committed) d.member.resolve(d.value);
      },
      (err: unknown) => {
        for (const d of committed) d.member.reject(err);
      },
    );
  }

  /** The members whose work the group's COMMIT kept, to be answered by `answer`; the others are refused here. */
  private async runGroup(group: Member[]): Promise<Array<{ member: Member; value: unknown }>> {
    const { conn, hooks } = this;
    // Rows this connection inserted, updated or deleted so far, triggers included (https://sqlite.org/lang_corefunc.html#total_changes):
    // compared after the COMMIT. A member undone by its savepoint still counts, which only empties caches needlessly.
    const changesBefore = this.changes();
    try {
      // The queue is in arrival order: the first member has waited longest.
      await this.begin(group[0]!.arrived);
    } catch (err) {
      for (const m of group) m.reject(err);
      return [];
    }
    hooks.begin();
    const done: Array<{ member: Member; value: unknown }> = [];
    const single = group.length === 1;
    for (let i = 0; i < group.length; i++) {
      const member = group[i]!;
      const mark = single ? undefined : hooks.mark();
      if (!single) conn.stmt('SAVEPOINT canon_group_member').run();
      try {
        const value = await member.fn();
        if (!single) conn.stmt('RELEASE canon_group_member').run();
        done.push({ member, value });
      } catch (err) {
        if (single || !conn.db.inTransaction) {
          // The member was alone, or SQLite rolled the whole transaction back: nothing of it is left.
          this.abandon([member, ...done.map((d) => d.member)], err);
          this.queue.unshift(...group.slice(i + 1));
          return [];
        }
        conn.stmt('ROLLBACK TO canon_group_member').run();
        conn.stmt('RELEASE canon_group_member').run();
        hooks.undoTo(mark);
        member.reject(err);
      }
    }
    try {
      conn.stmt('COMMIT').run();
    } catch (err) {
      this.abandon(
        done.map((d) => d.member),
        err,
      );
      return [];
    }
    hooks.commit();
    if (this.changes() !== changesBefore) {
      this.committed();
      return done;
    }
    // Nothing written (the embedded worker's polls finding no work): nothing to wait for on disk.
    for (const d of done) d.member.resolve(d.value);
    return [];
  }

  /**
   * BEGIN IMMEDIATE, waiting for another process's write lock without blocking the event loop. SQLite's own busy
   * handler sleeps inside the call, and better-sqlite3 calls synchronously: with the file locked elsewhere, every
   * request of this process (reads, health checks, timeouts) stalled for as long as the timeout. The handler is
   * off for this statement alone (other statements of the connection, the start's migration among them, keep it)
   * and the wait is timers, doubling to MAX_BUSY_WAIT_MS. Past the timeout the write did not happen and may be
   * tried again, as a PostgreSQL transaction that kept losing: StoreBusy, 503 with Retry-After, not a 500.
   */
  private async begin(since: number): Promise<void> {
    const { conn, busyTimeoutMs } = this;
    if (busyTimeoutMs === null) {
      conn.stmt('BEGIN IMMEDIATE').run();
      return;
    }
    const deadline = since + busyTimeoutMs;
    for (let attempt = 1, wait = 1; ; attempt++, wait = Math.min(wait * 2, MAX_BUSY_WAIT_MS)) {
      conn.stmt('PRAGMA busy_timeout = 0').get();
      try {
        conn.stmt('BEGIN IMMEDIATE').run();
        return;
      } catch (err) {
        if (!sqliteBusy(err)) throw err;
        if (performance.now() >= deadline) throw new StoreBusy(attempt, err);
      } finally {
        conn.stmt(`PRAGMA busy_timeout = ${busyTimeoutMs}`).get();
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(wait, deadline - performance.now()))));
    }
  }

  private changes(): number {
    return Number(this.conn.stmt('SELECT total_changes()').pluck().get());
  }

  /** Ends what is left of the transaction and refuses `members` with `err`: none of their work is kept. */
  private abandon(members: readonly Member[], err: unknown): void {
    if (this.conn.db.inTransaction) this.conn.db.exec('ROLLBACK');
    this.hooks.rollback();
    for (const m of members) m.reject(err);
  }
}

/** SQLITE_BUSY and its extended codes (https://sqlite.org/rescode.html#busy), as better-sqlite3 names them. */
export function sqliteBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
