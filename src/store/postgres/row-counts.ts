// Exact row counts kept by triggers on PostgreSQL: a collection's total, and its total per value of each filterable enum, read from a few rows instead of COUNT(*).
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { CompiledResource } from '../../model/compile.js';
import { quote, type Sql } from '../sql/queries.js';
import { TOTAL, countedColumns, literal, metaKey, recountStatements, triggersSignature } from '../sql/count-keys.js';
import { WRITE_META } from '../sql/meta.js';
import { numbered } from './dialect.js';

/**
 * Why: an offset page carries its exact total (spec: `pagination.total`), and under a stream of writes no count kept
 * per snapshot survives, so every page counted its filter's rows again: COUNT(*) of 12,000 products is ~2 ms of
 * PostgreSQL's time, most of the database's work in the mixed benchmark (docs/BENCHMARKS.md, "kept counts"). The
 * counts are kept by the database itself, so they are exact whoever writes (another process, a change by hand):
 * triggers add each row's change per key (`+1` inserted, `-1` deleted, `±1` when its enum changed) to one of SLOTS
 * rows of that key, under the writing transaction, so a count sees exactly the commits its statement's snapshot
 * sees. The slot is the writing transaction's id, hashed, modulo SLOTS: concurrent writers mostly add to different
 * rows and do not wait for one another's commit, and a count sums at most SLOTS rows per key. The rows are updated
 * in place (n is in no index: heap-only updates), so their number never grows.
 */
// Half-full pages: room for the heap-only updates every write makes.
export const COUNTS_TABLE =
  'CREATE TABLE IF NOT EXISTS canon_counts (table_name text NOT NULL, key text NOT NULL, slot smallint NOT NULL, n bigint NOT NULL, PRIMARY KEY (table_name, key, slot)) WITH (fillfactor = 50)';

/** Rows per key: two writing transactions at once add to the same row (and the second waits for the first's commit) one time in SLOTS. */
const SLOTS = 64;

/** The count of `keys` in `table` (a numeric sum: pg hands it over as text). */
export function countSql(table: string, keys: string[]): Sql {
  return { text: 'SELECT COALESCE(SUM(n), 0) AS n FROM canon_counts WHERE table_name = ? AND key = ANY(?)', params: [table, keys] };
}

/** PostgreSQL truncates identifiers past 63 bytes: a long table name gets a digest instead. */
function functionName(table: string): string {
  const name = `canon_count_${table}`;
  return quote(Buffer.byteLength(name) <= 63 ? name : `canon_count_${createHash('sha1').update(table).digest('hex').slice(0, 20)}`);
}

/**
 * The statements that (re)create a table's counting: one function, a row trigger for INSERT and DELETE, a row
 * trigger for UPDATE firing only when a counted enum changed (a price change costs nothing), TRUNCATE clearing the
 * table's counts. Row triggers, not statement triggers with transition tables: a single-row write (what the API
 * makes) cost 80 µs more with a statement trigger's tuplestore, 15 µs with a row trigger (pgbench). Deferred
 * constraint triggers: they run at COMMIT, so a transaction holds its slot's rows for the commit alone, not from
 * its write through its event's insert and the round trips between (writers sharing a slot waited on each other's
 * whole transaction otherwise: inserts took 0.59 ms instead of 0.11 under the mixed benchmark). Within the writing
 * transaction the counts therefore lag its own writes: PgOps counts inside transactions with COUNT(*).
 * `ENABLE ALWAYS`: they fire in replica sessions too (logical replication, `session_replication_role = replica`),
 * where ordinary triggers are skipped and the counts would drift.
 */
export function triggerStatements(r: CompiledResource): string[] {
  const t = quote(r.table);
  const name = literal(r.table);
  const fn = functionName(r.table);
  const columns = countedColumns(r);
  // `(key, delta)` for the row `row`: its total and its value of each counted enum (a null value has no key).
  const keysOf = (row: string, d: string): string[] => [`(${literal(TOTAL)}, ${d})`, ...columns.map((c) => `(${literal(`${c}=`)} || ${row}.${quote(c)}, ${d})`)];
  // Keys in order, so that two transactions sharing a slot take its rows in the same order. `grouped`: pairs may
  // name one key twice (an update's unchanged enum, -1 and +1), summed and dropped when they cancel.
  const add = (pairs: string[], grouped: boolean): string =>
    `INSERT INTO canon_counts (table_name, key, slot, n) SELECT ${name}, k, s, ${grouped ? 'SUM(d)' : 'd'} FROM (VALUES ${pairs.join(', ')}) AS v (k, d) ` +
    `WHERE k IS NOT NULL ${grouped ? 'GROUP BY k HAVING SUM(d) <> 0 ' : ''}ORDER BY k ON CONFLICT (table_name, key, slot) DO UPDATE SET n = canon_counts.n + EXCLUDED.n;`;
  // An update changes no total: its enums' old values count -1, new +1, and an enum that did not change cancels out.
  const updated = [...keysOf('OLD', '-1').slice(1), ...keysOf('NEW', '1').slice(1)];
  const body =
    // Hashed: consecutive writers' ids often differ by a fixed step (a write, then the event stamper's transaction).
    `DECLARE s smallint; BEGIN IF TG_OP = 'TRUNCATE' THEN DELETE FROM canon_counts WHERE table_name = ${name}; RETURN NULL; END IF; ` +
    `s := abs(hashint8(txid_current()) % ${SLOTS}); ` +
    `IF TG_OP = 'INSERT' THEN ${add(keysOf('NEW', '1'), false)} ELSIF TG_OP = 'DELETE' THEN ${add(keysOf('OLD', '-1'), false)} ` +
    (columns.length ? `ELSE ${add(updated, true)} ` : '') +
    'END IF; RETURN NULL; END';
  const statements = [
    `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $canon$ ${body} $canon$`,
    `DROP TRIGGER IF EXISTS canon_count_rows ON ${t}`,
    `DROP TRIGGER IF EXISTS canon_count_update ON ${t}`,
    `DROP TRIGGER IF EXISTS canon_count_truncate ON ${t}`,
    `CREATE CONSTRAINT TRIGGER canon_count_rows AFTER INSERT OR DELETE ON ${t} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE PROCEDURE ${fn}()`,
    `CREATE TRIGGER canon_count_truncate AFTER TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE PROCEDURE ${fn}()`,
  ];
  if (columns.length) {
    const when = columns.map((c) => `OLD.${quote(c)} IS DISTINCT FROM NEW.${quote(c)}`).join(' OR ');
    statements.push(`CREATE CONSTRAINT TRIGGER canon_count_update AFTER UPDATE ON ${t} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (${when}) EXECUTE PROCEDURE ${fn}()`);
  }
  for (const trigger of ['rows', 'truncate', ...(columns.length ? ['update'] : [])]) statements.push(`ALTER TABLE ${t} ENABLE ALWAYS TRIGGER canon_count_${trigger}`);
  // The counts as they stand, taken under the same lock as the triggers' creation: no write falls between.
  return [...statements, ...recountStatements(r, { column: 'slot', value: '0' })];
}

/**
 * Sets up (or again, when the counted columns changed) the triggers and counts of `r`, in one transaction holding
 * SHARE ROW EXCLUSIVE on the table (what CREATE TRIGGER takes; readers go on): writers (another process of an
 * earlier build, a rolling deploy) wait, so none is missed between the count and the triggers. Run under the
 * migration lock.
 */
export async function migrateCounts(client: pg.PoolClient, r: CompiledResource, current: string | undefined): Promise<void> {
  const signature = triggersSignature(r);
  if (current === signature) return;
  await client.query('BEGIN');
  try {
    await client.query(`LOCK TABLE ${quote(r.table)} IN SHARE ROW EXCLUSIVE MODE`);
    for (const statement of triggerStatements(r)) await client.query(statement);
    await client.query(numbered(WRITE_META), [metaKey(r), signature]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
