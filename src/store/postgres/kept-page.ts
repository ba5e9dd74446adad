// A PostgreSQL page read by its rows' ids, versions and update times when kept records can answer: only the rows not kept are read whole.
import type { CompiledResource } from '../../model/compile.js';
import type { RecordCache } from '../record-cache.js';
import { getManySql } from '../sql/queries.js';
import { fromRow, type Row } from '../sql/rows.js';
import type { StoredRecord } from '../types.js';
import { pgDialect } from './dialect.js';
import { pgCodec } from './rows.js';

/**
 * What a page selects instead of every column: what RecordCache.same compares. The driver turns each column of each
 * row into a string and the row into an object; a page of 20 products of eleven columns cost about 30 µs of that
 * (parseRow, addFields and the text decoding, profile of the random sparse page, docs/BENCHMARKS.md), for records
 * the kept rows already held.
 */
export const KEPT_PAGE_COLUMNS = '"id", "version", "updated_at"';

/**
 * How many of the rows pages read lately were kept: a page that finds few of its rows kept (a table larger than the
 * 10,000 rows kept, read at random; pages just after the kept rows were emptied) pays two statements for what one
 * would read, so pages select ids and versions alone only while most rows were found kept. Every page read with kept
 * rows counts, either way, so the share recovers once pages find their rows kept again.
 */
export class KeptShare {
  /** A moving average of the share of a page's rows found kept (each page weighs a tenth); pages start hopeful. */
  private share = 1;

  /** Whether a page should select ids and versions alone. */
  get worth(): boolean {
    return this.share >= 0.5;
  }

  /** A page of `rows` rows found `kept` of them kept. */
  note(kept: number, rows: number): void {
    if (rows > 0) this.share = 0.9 * this.share + (0.1 * kept) / rows;
  }
}

/** The row's id, version and update time as RecordCache.same compares them. */
function versionOf(row: Row): { id: string; version: number; updatedAt: unknown } {
  return { id: row.id as string, version: Number(row.version), updatedAt: pgCodec.decode('timestamp', row.updated_at) };
}

/** The record `cache` holds for the row when it is that version, else the row decoded and kept. */
function keptRecord(r: CompiledResource, row: Row, v: ReturnType<typeof versionOf>, cache: RecordCache): StoredRecord {
  return cache.same(r.name, v.id, v.version, v.updatedAt) ?? cache.set(r.name, v.id, fromRow(r, row, pgCodec));
}

/** Whole rows as records: the kept ones where `cache` holds that version, the others decoded and kept; `share` learns how many were kept. */
export function keptRows(r: CompiledResource, raw: readonly Row[], cache: RecordCache, share: KeptShare): StoredRecord[] {
  let found = 0;
  const rows = raw.map((row) => {
    const id = row.id as string;
    const known = cache.same(r.name, id, Number(row.version), pgCodec.decode('timestamp', row.updated_at));
    if (known === undefined) return cache.set(r.name, id, fromRow(r, row, pgCodec));
    found++;
    return known;
  });
  share.note(found, raw.length);
  return rows;
}

/**
 * The page's records, from `raw` (KEPT_PAGE_COLUMNS, in the page's order): each one `kept` holds as that version, the
 * others read whole by id in one statement and kept. Undefined when the page must be read whole instead: `kept`
 * answers nothing now (the snapshot moved since the page's statement was sent), or a row read by id is not the
 * version the page's statement saw (changed or deleted between the two), so that a page never mixes what two
 * snapshots show. `kept` is asked again after the second statement: a change not ours in between (one made by hand
 * keeping the version) empties it, and the page is read whole.
 */
export async function keptPage(
  r: CompiledResource,
  raw: readonly Row[],
  kept: () => RecordCache | undefined,
  read: (sql: string, params: unknown[]) => Promise<Row[]>,
  share: KeptShare,
): Promise<StoredRecord[] | undefined> {
  const cache = kept();
  if (cache === undefined) return undefined;
  const rows = new Array<StoredRecord>(raw.length);
  const seen = raw.map(versionOf);
  let missing: number[] | undefined;
  for (let i = 0; i < seen.length; i++) {
    const { id, version, updatedAt } = seen[i]!;
    const known = cache.same(r.name, id, version, updatedAt);
    if (known !== undefined) rows[i] = known;
    else (missing ??= []).push(i);
  }
  share.note(raw.length - (missing?.length ?? 0), raw.length);
  if (missing === undefined) return rows;
  const sql = getManySql(
    pgDialect,
    r,
    missing.map((i) => seen[i]!.id),
  )!;
  const byId = new Map<string, Row>();
  for (const row of await read(sql.text, sql.params)) byId.set(row.id as string, row);
  const still = kept();
  if (still === undefined) return undefined;
  for (const i of missing) {
    const row = byId.get(seen[i]!.id);
    if (row === undefined) return undefined;
    const now = versionOf(row);
    if (now.version !== seen[i]!.version || now.updatedAt !== seen[i]!.updatedAt) return undefined;
    rows[i] = keptRecord(r, row, now, still);
  }
  return rows;
}
