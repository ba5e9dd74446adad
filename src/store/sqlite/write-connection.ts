// What the SQLite migration steps need of the write connection, named by shape: sqlite-ops.ts's Connection, whose module imports theirs.
import type Database from 'better-sqlite3';

export interface WriteConnection {
  readonly db: { exec(sql: string): unknown };
  stmt(sql: string): Database.Statement;
}
