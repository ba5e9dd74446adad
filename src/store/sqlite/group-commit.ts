// Group commit for SQLite: transactions that queue while one runs share the next BEGIN … COMMIT, each in a savepoint of its own, so one fsync makes a whole group durable.
import type { Connection } from './sqlite-ops.js';

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
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/**
 * With `synchronous=FULL` every COMMIT waits for the disk (about half a millisecond here, with the event
 * loop blocked: better-sqlite3 is synchronous), which bounded writes to some 1,800 commits a second
 * whatever else they cost. Writes that arrive while a transaction runs now wait for it as before (the
 * store has one write connection), then run one after another inside one transaction, each in a savepoint:
 * a member that throws is rolled back to its savepoint alone and its caller gets its error at once; the
 * others are answered only after the group's COMMIT returned, so nothing is acknowledged before it is on
 * disk — durability is exactly as before, fewer fsyncs carry it (https://sqlite.org/lang_savepoint.html).
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
    private readonly exclusive: (body: () => Promise<void>) => Promise<void>,
    /**
     * Called after a COMMIT that changed rows, before any member is answered. A transaction that changed
     * nothing (the embedded worker's polls find no work once a second) moves nothing: the caches stamped by
     * commits stay valid.
     */
    private readonly committed: () => void,
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
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
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
          await this.exclusive(() => this.runGroup(group));
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

  private async runGroup(group: Member[]): Promise<void> {
    const { conn, hooks } = this;
    // Rows this connection inserted, updated or deleted so far, triggers included (https://sqlite.org/lang_corefunc.html#total_changes):
    // compared after the COMMIT. A member undone by its savepoint still counts, which only empties caches needlessly.
    const changesBefore = this.changes();
    try {
      conn.stmt('BEGIN IMMEDIATE').run();
    } catch (err) {
      for (const m of group) m.reject(err);
      return;
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
          return;
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
      return;
    }
    hooks.commit();
    if (this.changes() !== changesBefore) this.committed();
    for (const d of done) d.member.resolve(d.value);
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
