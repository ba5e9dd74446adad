// Which offset totals the kept counts answer, on both stores: a collection's total and its total per value of each filterable enum (src/store/postgres/row-counts.ts, src/store/sqlite/row-counts.ts).
import type { CompiledResource } from '../../model/compile.js';
import type { ListQuery } from '../types.js';
import { quote } from './queries.js';

/** The shape of the triggers: a start whose meta value differs sets them (and the counts) up again. */
const TRIGGERS_VERSION = 'v1';

/** The key of every row (a collection's total). */
export const TOTAL = '';

/** A SQL string literal (both engines double the quote). */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

const pathsCache = new WeakMap<CompiledResource, Map<string, string>>();

/** Query path → column of each counted enum: filterable enums (few values, the common filter: `status=active`). */
function countedPaths(r: CompiledResource): Map<string, string> {
  let paths = pathsCache.get(r);
  if (!paths) {
    paths = new Map([...r.paths.values()].filter((p) => p.filterable && p.type === 'enum').map((p) => [p.path, p.column]));
    pathsCache.set(r, paths);
  }
  return paths;
}

/** The columns whose per-value totals are kept, in a fixed order. */
export function countedColumns(r: CompiledResource): string[] {
  return [...new Set(countedPaths(r).values())].sort();
}

/**
 * The keys whose sum is the count of `query`, or undefined when its filter is not one of them (then COUNT(*) counts):
 * no condition, or one `eq` / `in` on a counted enum with values that are not null. A search counts its own way.
 */
export function countKeys(r: CompiledResource, query: ListQuery): string[] | undefined {
  if (query.search !== undefined) return undefined;
  if (query.where.length === 0) return [TOTAL];
  if (query.where.length !== 1) return undefined;
  const c = query.where[0]!;
  const column = countedPaths(r).get(c.path);
  if (column === undefined) return undefined;
  if (c.op === 'eq' && typeof c.value === 'string') return [`${column}=${c.value}`];
  if (c.op === 'in' && Array.isArray(c.value) && c.value.length > 0 && c.value.every((v) => typeof v === 'string')) {
    return [...new Set(c.value as string[])].map((v) => `${column}=${v}`);
  }
  return undefined;
}

/** What the triggers of `r` are made for: when the meta value under `metaKey(r)` differs, they are set up again. */
export function triggersSignature(r: CompiledResource): string {
  return `${TRIGGERS_VERSION}:${countedColumns(r).join(',')}`;
}

/** `canon_meta` keys of the counts' signatures: this prefix and the table's name. */
export const META_PREFIX = 'counts:';

export function metaKey(r: CompiledResource): string {
  return `${META_PREFIX}${r.table}`;
}

/**
 * The statements that take `r`'s counts as they stand, in place of any kept (run where no write can fall between them
 * and the triggers' creation). `slot`: the extra key column and its value for the first row of each key (PostgreSQL
 * spreads a key over slots; SQLite has none).
 */
export function recountStatements(r: CompiledResource, slot?: { column: string; value: string }): string[] {
  const t = quote(r.table);
  const name = literal(r.table);
  const [slotColumn, slotValue] = slot ? [`, ${slot.column}`, `, ${slot.value}`] : ['', ''];
  const into = `INSERT INTO canon_counts (table_name, key${slotColumn}, n)`;
  return [
    `DELETE FROM canon_counts WHERE table_name = ${name}`,
    `${into} SELECT ${name}, ${literal(TOTAL)}${slotValue}, COUNT(*) FROM ${t}`,
    ...countedColumns(r).map(
      (c) => `${into} SELECT ${name}, ${literal(`${c}=`)} || ${quote(c)}${slotValue}, COUNT(*) FROM ${t} WHERE ${quote(c)} IS NOT NULL GROUP BY ${quote(c)}`,
    ),
  ];
}
