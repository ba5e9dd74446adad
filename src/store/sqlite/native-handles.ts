// Keeps every better-sqlite3 database and statement reachable until the process ends, so the garbage collector never destroys one.
//
// Node 24.19 and later compile an environment cleanup hook into every node::ObjectWrap (better-sqlite3's
// Database, Statement and StatementIterator are ObjectWraps); destroying one from a V8 weak callback, where no
// context is entered, aborts the whole process ("Assertion failed: (env) != nullptr" in
// RemoveEnvironmentCleanupHook, nodejs/node#65446). An object that is never garbage is never destroyed that way:
// Node deletes the survivors itself when the environment is torn down, with the environment still current.
// What this costs is the JavaScript wrappers of statements of closed databases (their SQLite memory is freed on
// close): a few kilobytes per store, and a server opens one store.
import Database from 'better-sqlite3';

const retained = new Set<object>();

/** Opens a database that stays reachable for the life of the process. */
export function openDatabase(path: string, options?: Database.Options): Database.Database {
  const db = new Database(path, options);
  retained.add(db);
  return db;
}

/** Prepares a statement that stays reachable for the life of the process (callers cache it; this only pins it). */
export function prepare(db: Database.Database, sql: string): Database.Statement {
  const statement = db.prepare(sql);
  retained.add(statement);
  return statement;
}

/** How many objects are pinned: for tests. */
export function retainedCount(): number {
  return retained.size;
}
