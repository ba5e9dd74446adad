// Exact row counts kept by triggers on SQLite: a collection's total, and its total per value of each filterable enum, read from one row per key instead of COUNT(*).
import type { CompiledResource } from '../../model/compile.js';
import { quote, type Sql } from '../sql/queries.js';
import { TOTAL, countedColumns, literal, metaKey, recountStatements, triggersSignature } from '../sql/count-keys.js';
import { READ_META, WRITE_META } from '../sql/meta.js';
import type { WriteConnection } from './write-connection.js';

/**
 * Why, as on PostgreSQL (src/store/postgres/row-counts.ts): an offset page's exact total was a COUNT(*) each time a
 * commit had moved the change stamp, its cost growing with the rows that match (docs/BENCHMARKS.md, "Kept counts").
 * Triggers keep one row per key in the writing transaction itself, for any writer (another process on the file, the
 * sqlite3 shell): SQLite has one writer at a time, so one row per key is never waited for. A `DELETE` without `WHERE`
 * runs the triggers too: SQLite gives up its truncate optimisation on a table that has triggers.
 */
export const COUNTS_TABLE =
  'CREATE TABLE IF NOT EXISTS canon_counts (table_name TEXT NOT NULL, key TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (table_name, key)) WITHOUT ROWID';

/** The count of `keys` in `table`. */
export function countSql(table: string, keys: string[]): Sql {
  return { text: `SELECT COALESCE(SUM(n), 0) AS n FROM canon_counts WHERE table_name = ? AND key IN (${keys.map(() => '?').join(', ')})`, params: [table, ...keys] };
}

/** Trigger names are the schema's, not the table's: each carries its table's name. */
function triggerName(table: string, suffix: string): string {
  return quote(`canon_count_${table}_${suffix}`);
}

/**
 * The statements that (re)create a table's counting (run inside the migration's IMMEDIATE transaction, so no write
 * falls between the count and the triggers): row triggers for INSERT and DELETE, one for UPDATE when a counted enum
 * changed (a price change runs none), then the counts as they stand.
 */
export function triggerStatements(r: CompiledResource): string[] {
  const t = quote(r.table);
  const name = literal(r.table);
  const columns = countedColumns(r);
  // `(key, delta)` for the row `row`: its total and its value of each counted enum (a null value has no key).
  const keysOf = (row: string, d: string): string[] => [
    `SELECT ${literal(TOTAL)} AS k, ${d} AS d`,
    ...columns.map((c) => `SELECT ${literal(`${c}=`)} || ${row}.${quote(c)} AS k, ${d} AS d`),
  ];
  // `WHERE k IS NOT NULL` also keeps SQLite's parser from reading ON CONFLICT as a join constraint (https://sqlite.org/lang_upsert.html).
  const add = (pairs: string[], grouped: boolean): string =>
    `INSERT INTO canon_counts (table_name, key, n) SELECT ${name}, k, ${grouped ? 'SUM(d)' : 'd'} FROM (${pairs.join(' UNION ALL ')}) WHERE k IS NOT NULL ` +
    `${grouped ? 'GROUP BY k HAVING SUM(d) <> 0 ' : ''}ON CONFLICT (table_name, key) DO UPDATE SET n = n + excluded.n;`;
  const statements = [
    ...['insert', 'delete', 'update'].map((suffix) => `DROP TRIGGER IF EXISTS ${triggerName(r.table, suffix)}`),
    `CREATE TRIGGER ${triggerName(r.table, 'insert')} AFTER INSERT ON ${t} BEGIN ${add(keysOf('NEW', '1'), false)} END`,
    `CREATE TRIGGER ${triggerName(r.table, 'delete')} AFTER DELETE ON ${t} BEGIN ${add(keysOf('OLD', '-1'), false)} END`,
  ];
  if (columns.length) {
    // An update changes no total: its enums' old values count -1, new +1, and an enum that did not change cancels out.
    const pairs = [...keysOf('OLD', '-1').slice(1), ...keysOf('NEW', '1').slice(1)];
    const when = columns.map((c) => `OLD.${quote(c)} IS NOT NEW.${quote(c)}`).join(' OR ');
    statements.push(`CREATE TRIGGER ${triggerName(r.table, 'update')} AFTER UPDATE ON ${t} WHEN ${when} BEGIN ${add(pairs, true)} END`);
  }
  return [...statements, ...recountStatements(r)];
}

/** (Re)creates `r`'s triggers and counts when what they were made for changed; inside the migration's transaction. */
export function migrateCounts(conn: WriteConnection, r: CompiledResource): void {
  const signature = triggersSignature(r);
  if (conn.stmt(READ_META).pluck().get(metaKey(r)) === signature) return;
  for (const statement of triggerStatements(r)) conn.db.exec(statement);
  conn.stmt(WRITE_META).run(metaKey(r), signature);
}
