// The full-text index's migration on SQLite: made when a resource gains searchable fields, rebuilt when they change, its triggers replaced when an earlier build made them otherwise.
import type { CompiledResource } from '../../model/compile.js';
import { SEARCH_TRIGGERS, ftsTable, quote, searchIndex } from './ddl.js';
import type { WriteConnection } from './write-connection.js';

/** (Re)creates `r`'s full-text index when its searchable fields changed, rebuilding it from the table; inside the migration's transaction. */
export function migrateSearch(conn: WriteConnection, r: CompiledResource): void {
  const name = ftsTable(r);
  const existing = (conn.stmt("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) as { sql: string } | undefined)?.sql;
  if (r.searchable.length === 0) {
    if (existing) dropSearch(conn, name);
    return;
  }
  const index = searchIndex(r);
  if (existing === index.table) {
    replaceChangedTriggers(conn, index.triggers);
    return;
  }
  if (existing) dropSearch(conn, name);
  conn.db.exec(index.table);
  replaceChangedTriggers(conn, index.triggers);
  conn.stmt(`INSERT INTO ${quote(name)}(${quote(name)}) VALUES ('rebuild')`).run();
}

/**
 * A trigger whose stored text differs from what this build makes (an update that re-indexed whatever changed, before
 * the `WHEN` of ddl.ts), or that is missing, is made again: the index's content is the same either way.
 */
function replaceChangedTriggers(conn: WriteConnection, triggers: ReadonlyArray<{ name: string; sql: string }>): void {
  const stored = conn.stmt("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?").pluck();
  for (const t of triggers) {
    if (stored.get(t.name) === t.sql) continue;
    conn.db.exec(`DROP TRIGGER IF EXISTS ${quote(t.name)}`);
    conn.db.exec(t.sql);
  }
}

function dropSearch(conn: WriteConnection, name: string): void {
  for (const suffix of SEARCH_TRIGGERS) conn.db.exec(`DROP TRIGGER IF EXISTS ${quote(`${name}_${suffix}`)}`);
  conn.db.exec(`DROP TABLE IF EXISTS ${quote(name)}`);
}
