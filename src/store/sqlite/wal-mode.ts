// Switching a file to WAL when several processes open it at once: the one refusal SQLite's busy handler does not wait out.
import type Database from 'better-sqlite3';
import { sqliteBusy } from './group-commit.js';

/** The longest single pause between tries; the first is 1 ms, and each doubles. */
const MAX_PAUSE_MS = 50;

/**
 * `PRAGMA journal_mode = WAL`, tried again while SQLite answers SQLITE_BUSY, until `busyTimeoutMs` has passed. On a
 * file still in rollback mode (a new one) the pragma reads the header, then writes it while keeping that read: when
 * another connection holds the write lock at that moment (another process switching the same new file), SQLite
 * answers SQLITE_BUSY at once, without the busy handler, which it never calls for a connection that holds a read
 * transaction (https://sqlite.org/c3ref/busy_handler.html: the deadlock case). The other's switch lasts
 * milliseconds; one of four `canon serve` processes started at once on a fresh file exited "database is locked"
 * (CI, 2026-11-29). The pauses block, as SQLite's own busy handler does on this connection: the store is opening,
 * and nothing else of it runs yet. Giving up, it closes the connection.
 */
export function switchToWal(db: Database.Database, busyTimeoutMs: number): void {
  const deadline = performance.now() + busyTimeoutMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    try {
      db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (err) {
      if (!sqliteBusy(err) || performance.now() >= deadline) {
        // The store is not made: its connection goes with it.
        db.close();
        throw err;
      }
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(1, Math.min(pause, deadline - performance.now())));
  }
}
