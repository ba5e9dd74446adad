// SQLite group commit: queued transactions share one COMMIT, each in a savepoint; a failing member is undone alone; nothing is answered before its COMMIT.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Database from 'better-sqlite3';
import { openDatabase, prepare } from '../../../src/store/sqlite/native-handles.js';
import { GroupCommit, type GroupHooks } from '../../../src/store/sqlite/group-commit.js';
import { Connection } from '../../../src/store/sqlite/sqlite-ops.js';
import { Mutex } from '../../../src/store/mutex.js';
import { StoreBusy } from '../../../src/store/types.js';

/** Hooks that record what the group told them, with a pending list like the idempotency directory's. */
class RecordingHooks implements GroupHooks {
  calls: string[] = [];
  pending: string[] = [];
  taken: string[] = [];
  begin(): void {
    this.calls.push('begin');
  }
  commit(): void {
    this.calls.push('commit');
    this.taken.push(...this.pending);
    this.pending = [];
  }
  rollback(): void {
    this.calls.push('rollback');
    this.pending = [];
  }
  mark(): unknown {
    return [...this.pending];
  }
  undoTo(mark: unknown): void {
    this.calls.push('undo');
    this.pending = [...(mark as string[])];
  }
}

describe('SQLite group commit', () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'canon-group-commit-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  let n = 0;
  function setUp(
    busyTimeoutMs?: number,
    durable?: () => Promise<void>,
  ): { db: Database.Database; other: Database.Database; group: GroupCommit; hooks: RecordingHooks; commits: () => number } {
    file = path.join(dir, `g${n++}.db`);
    const db = openDatabase(file);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const other = openDatabase(file, { readonly: true });
    const hooks = new RecordingHooks();
    const mutex = new Mutex();
    let commits = 0;
    const group = new GroupCommit(
      new Connection(db),
      hooks,
      (body) => mutex.run(body),
      () => commits++,
      busyTimeoutMs,
      durable ?? null,
    );
    return { db, other, group, hooks, commits: () => commits };
  }
  const count = (db: Database.Database): number => (prepare(db, 'SELECT COUNT(*) AS n FROM t').get() as { n: number }).n;

  it('transactions queued in one turn of the event loop commit together: 20 writes, one COMMIT, every row there, each caller its own result', async () => {
    const { db, other, group, commits } = setUp();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        group.run(async () => {
          prepare(db, 'INSERT INTO t (k) VALUES (?)').run(`k${i}`);
          await new Promise((resolve) => setImmediate(resolve));
          return i * 10;
        }),
      ),
    );
    assert.deepEqual(
      results,
      Array.from({ length: 20 }, (_, i) => i * 10),
    );
    assert.equal(count(other), 20);
    // Queued in the same turn of the event loop: one group, one COMMIT.
    assert.equal(commits(), 1);
    db.close();
    other.close();
  });

  it('a group that changed no row moves no change stamp (the worker polls once a second and mostly finds nothing); the next that writes does', async () => {
    const { db, group, commits } = setUp();
    await group.run(async () => prepare(db, 'SELECT COUNT(*) FROM t').get());
    await Promise.all([group.run(async () => prepare(db, 'SELECT 1').get()), group.run(async () => prepare(db, 'UPDATE t SET k = k WHERE k = ?').run('none'))]);
    assert.equal(commits(), 0);
    await group.run(async () => prepare(db, 'INSERT INTO t (k) VALUES (?)').run('one'));
    assert.equal(commits(), 1);
    await group.run(async () => prepare(db, 'SELECT k FROM t').all());
    assert.equal(commits(), 1);
    await group.run(async () => prepare(db, 'DELETE FROM t WHERE k = ?').run('one'));
    assert.equal(commits(), 2);
    db.close();
  });

  it('a member that throws is rolled back to its savepoint alone: its caller gets its error, the others commit, its pending rows are undone', async () => {
    const { db, other, group, hooks } = setUp();
    const first = group.run(async () => {
      prepare(db, 'INSERT INTO t (k) VALUES (?)').run('first');
      await new Promise((resolve) => setTimeout(resolve, 5));
    });
    const members = ['a', 'b', 'c'].map((k) =>
      group.run(async () => {
        prepare(db, 'INSERT INTO t (k) VALUES (?)').run(k);
        hooks.pending.push(k);
        if (k === 'b') throw new Error('member b fails');
        return k;
      }),
    );
    await first;
    const settled = await Promise.allSettled(members);
    assert.deepEqual(
      settled.map((s) => s.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.match(String((settled[1] as PromiseRejectedResult).reason), /member b fails/);
    assert.deepEqual(
      (prepare(other, 'SELECT k FROM t ORDER BY k').all() as Array<{ k: string }>).map((r) => r.k),
      ['a', 'c', 'first'],
    );
    assert.deepEqual(hooks.taken, ['a', 'c']);
    assert.ok(hooks.calls.includes('undo'));
    db.close();
    other.close();
  });

  it('nobody is answered before the COMMIT: when a member resolves, another connection sees its row and every row of its group', async () => {
    const { db, other, group } = setUp();
    const blocker = group.run(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
    });
    const seen: number[] = [];
    const members = Array.from({ length: 5 }, (_, i) =>
      group
        .run(async () => {
          prepare(db, 'INSERT INTO t (k) VALUES (?)').run(`m${i}`);
          // Inside the group: the other connection does not see it yet.
          assert.equal(count(other), 0);
        })
        .then(() => seen.push(count(other))),
    );
    await blocker;
    await Promise.all(members);
    assert.deepEqual(seen, [5, 5, 5, 5, 5]);
    db.close();
    other.close();
  });

  it('a group of one that throws rolls back as a plain transaction', async () => {
    const { db, other, group, hooks } = setUp();
    await assert.rejects(
      group.run(async () => {
        prepare(db, 'INSERT INTO t (k) VALUES (?)').run('alone');
        throw new Error('no');
      }),
      /no/,
    );
    assert.equal(count(other), 0);
    assert.deepEqual(hooks.calls, ['begin', 'rollback']);
    assert.equal(db.inTransaction, false);
    db.close();
    other.close();
  });

  it('when SQLite ends the whole transaction, every member that ran gets the error, the rest run in the next group', async () => {
    const { db, other, group } = setUp();
    const blocker = group.run(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
    });
    // The blocker's group has started: the members below queue behind it and form the next group.
    await new Promise((resolve) => setImmediate(resolve));
    const order: string[] = [];
    const make = (k: string, fatal = false) =>
      group.run(async () => {
        order.push(k);
        prepare(db, 'INSERT INTO t (k) VALUES (?)').run(k);
        if (fatal) {
          // What SQLite does on an I/O error or a full disk: the transaction is gone.
          db.exec('ROLLBACK');
          throw new Error('disk I/O error');
        }
        return k;
      });
    const members = [make('x'), make('y', true), make('z')];
    await blocker;
    const settled = await Promise.allSettled(members);
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? s.value : String(s.reason))),
      ['Error: disk I/O error', 'Error: disk I/O error', 'z'],
    );
    assert.deepEqual(order, ['x', 'y', 'z']);
    assert.deepEqual(
      (prepare(other, 'SELECT k FROM t').all() as Array<{ k: string }>).map((r) => r.k),
      ['z'],
    );
    db.close();
    other.close();
  });

  it('another process holding the write lock past the busy timeout: the group is refused with StoreBusy, the event loop free all along; the next group runs', async () => {
    const { db, group } = setUp(300);
    const writer = openDatabase(file);
    writer.exec('BEGIN IMMEDIATE');
    // SQLite's own busy handler sleeps inside the call: ticks would stop for the whole wait.
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 10);
    try {
      await assert.rejects(
        group.run(async () => 1),
        (err: unknown) => err instanceof StoreBusy && (err.cause as { code?: string }).code === 'SQLITE_BUSY',
      );
    } finally {
      clearInterval(ticking);
      writer.exec('COMMIT');
    }
    assert.ok(ticks >= 5, `timers ran while the group waited (${ticks} ticks of 10 ms in 300 ms)`);
    assert.equal(await group.run(async () => 2), 2);
    assert.equal(Number(prepare(db, 'PRAGMA busy_timeout').pluck().get()), 300, 'the busy handler is back for the connection’s other statements');
    writer.close();
    db.close();
  });

  it('a lock let go while the group waits: the group goes through', async () => {
    const { db, group } = setUp(5_000);
    const writer = openDatabase(file);
    writer.exec('BEGIN IMMEDIATE');
    setTimeout(() => writer.exec('COMMIT'), 100);
    const started = performance.now();
    assert.equal(await group.run(async () => 3), 3);
    assert.ok(performance.now() - started >= 90, 'it waited for the lock');
    writer.close();
    db.close();
  });

  /** A stand-in for the WAL's sync (wal-sync.ts) that the test finishes by hand. */
  function manualSync(): { durable: () => Promise<void>; asked: () => number; finish: (err?: Error) => void } {
    const waiting: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
    let asked = 0;
    return {
      durable: () =>
        new Promise<void>((resolve, reject) => {
          asked++;
          waiting.push({ resolve, reject });
        }),
      asked: () => asked,
      finish: (err) => {
        for (const w of waiting.splice(0)) {
          if (err) w.reject(err);
          else w.resolve();
        }
      },
    };
  }
  const settled = async (p: Promise<unknown>): Promise<boolean> => {
    let done = false;
    p.then(
      () => (done = true),
      () => (done = true),
    );
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    return done;
  };

  it('writers are answered only once the commit is durable; the next group waits for that sync, gathering the writes that arrive meanwhile, while the event loop runs on', async () => {
    const sync = manualSync();
    const { db, other, group, commits } = setUp(undefined, sync.durable);
    const first = group.run(async () => prepare(db, 'INSERT INTO t (k) VALUES (?)').run('a').changes);
    assert.equal(await settled(first), false, 'answered before the sync finished');
    assert.equal(count(other), 1, 'committed (visible to readers) before it is durable');
    assert.equal(sync.asked(), 1);
    const later = ['b', 'c'].map((k) => group.run(async () => prepare(db, 'INSERT INTO t (k) VALUES (?)').run(k).changes));
    assert.equal(await settled(later[0]!), false);
    assert.equal(count(other), 1, 'the writes that came during the sync wait for it');
    sync.finish();
    assert.equal(await first, 1);
    assert.equal(await settled(later[1]!), false, 'their own commit is not durable yet');
    assert.equal(count(other), 3);
    assert.equal(commits(), 2, 'the two later writes shared one COMMIT');
    assert.equal(sync.asked(), 2);
    sync.finish();
    assert.deepEqual(await Promise.all(later), [1, 1]);
    db.close();
    other.close();
  });

  it('a failed sync refuses the writers of the commits it was to cover; a group that changed nothing does not wait for a sync', async () => {
    const sync = manualSync();
    const { db, other, group } = setUp(undefined, sync.durable);
    const write = group.run(async () => prepare(db, 'INSERT INTO t (k) VALUES (?)').run('a'));
    await settled(write);
    sync.finish(new Error('EIO: the disk failed'));
    await assert.rejects(write, /EIO/);
    assert.equal((await group.run(async () => prepare(db, 'SELECT COUNT(*) AS n FROM t').get())) !== undefined, true);
    assert.equal(sync.asked(), 1, 'a read-only group asked for no sync');
    db.close();
    other.close();
  });
});
