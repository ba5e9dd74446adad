// Makes SQLite's commits durable off the event loop: the write-ahead log synced by libuv's thread pool after COMMIT, shared by every commit made before the sync began.
import { closeSync, fdatasync, fdatasyncSync, openSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * With `synchronous=FULL` SQLite fsyncs the WAL inside COMMIT, and better-sqlite3 calls are synchronous: the event
 * loop stood still for the disk at every commit group (0.5 ms here; 14% of the mixed benchmark's wall time, 2026-11-28).
 * The connection now runs `synchronous=NORMAL`: COMMIT writes the transaction's frames, commit frame included,
 * into the WAL without syncing, which keeps the database consistent through any crash (https://sqlite.org/wal.html,
 * https://sqlite.org/pragma.html#pragma_synchronous), and this class syncs the WAL file itself with fdatasync(2)
 * from the thread pool. A writer is answered only once a sync that began after its COMMIT returned, so an
 * acknowledged write is on disk exactly as before. Syncs coalesce: commits made while one is under way share the
 * next one (one in flight, at most one waiting).
 *
 * Every connection of every process appends to the same WAL file (one inode: the file is kept while any connection
 * is open, and only ever truncated, not replaced), so syncing it through our own descriptor flushes every frame
 * written before the call. SQLite still syncs the WAL before a checkpoint and the database after it (NORMAL does).
 *
 * What changes: a commit is visible to other readers before it is durable, for as long as the sync takes (as with
 * PostgreSQL's `synchronous_commit=off`, but no writer is answered early). A power cut in that window loses a
 * commit that a concurrent reader may have seen, never one whose writer was answered.
 */
export class WalSync {
  private fd: number | undefined;
  /** The sync under way, if any. */
  private running: Promise<void> | undefined;
  /** The sync that starts when the running one ends: it covers every commit made since the running one began. */
  private next: Promise<void> | undefined;
  private syncs = 0;

  /** Resolved now: SQLite resolved the database's path when it opened it, and the descriptor opens later (a chdir between would miss it). */
  private readonly walPath: string;

  constructor(walPath: string) {
    this.walPath = resolve(walPath);
  }

  /** Resolves once a sync that began after this call has finished: everything committed before the call is on disk. */
  afterCommit(): Promise<void> {
    if (this.running === undefined) return (this.running = this.sync());
    // The running sync may have begun before the caller's commit: wait for the one after it.
    this.next ??= this.running.then(
      () => this.startNext(),
      () => this.startNext(),
    );
    return this.next;
  }

  /** Synchronously, for commits made outside the write queue (the migration at start). */
  syncNow(): void {
    fdatasyncSync(this.descriptor());
    this.syncs++;
  }

  /** Syncs finished: for tests. */
  get completed(): number {
    return this.syncs;
  }

  /** Once the syncs asked for have ended (whatever their outcome): the descriptor is not closed under one in flight. */
  async settled(): Promise<void> {
    while (this.running !== undefined || this.next !== undefined) await (this.next ?? this.running)!.catch(() => undefined);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private startNext(): Promise<void> {
    this.next = undefined;
    return (this.running = this.sync());
  }

  private sync(): Promise<void> {
    const done = new Promise<void>((resolve, reject) => {
      let fd: number;
      try {
        fd = this.descriptor();
      } catch (err) {
        reject(err as Error);
        return;
      }
      fdatasync(fd, (err) => {
        if (err) {
          reject(err);
          return;
        }
        this.syncs++;
        resolve();
      });
    });
    // The next caller starts a new sync once this one has ended (whatever its outcome).
    const clear = (): void => {
      if (this.running === done) this.running = undefined;
    };
    done.then(clear, clear);
    return done;
  }

  /**
   * The WAL file, opened at the first sync: it exists from the first commit on. Read-only is enough for fdatasync(2)
   * on Linux and macOS; the descriptor is closed with the store (a later store on the file opens its own).
   */
  private descriptor(): number {
    this.fd ??= openSync(this.walPath, 'r');
    return this.fd;
  }
}
