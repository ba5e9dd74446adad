// Builds parameterised SQL for conditions, ordering, keyset positions and searches, for any SQL dialect;
// client values only ever travel as bound parameters (written `?`; PostgreSQL numbers them).
import { UUID_PATTERN as UUID } from '../../lib/uuid.js';
import type { CompiledResource } from '../../model/compile.js';
import type { Condition, GroupQuery, ListQuery, SortKey, StoredRecord } from '../types.js';

/** What differs between SQL engines in the statements Canon builds. */
export interface Dialect {
  /** Null-safe equality and inequality operators. */
  same: string;
  differs: string;
  /** ORDER BY suffix making nulls of a nullable column sort first ascending and last descending (the store contract). */
  nulls(desc: boolean, nullable: boolean): string;
  /** Whether `(a, b) > (?, ?)` row-value comparisons are available (both engines here). */
  rowValues: boolean;
  value(v: unknown): unknown;
  /** The select list of a table's rows (`*`, or explicit columns to leave out internal ones). */
  columns(resource: CompiledResource): string;
  /** The column a table's rows are looked up by fastest, held in every index (SQLite's rowid alias, PostgreSQL's primary key). */
  rowKey: string;
  /** The matching rows of a search with a `_rank` column (lower is better), or undefined when the text has no words. */
  searchSource(resource: CompiledResource, text: string): Sql | undefined;
  /** The suffix of a list that claims rows past those other transactions hold (ListQuery.skipLocked). */
  skipLocked: string;
  /**
   * "`col` is one of a list bound as ONE parameter" (`in` filters, batch reads by id): one statement text
   * for any length of list, so a client sending lists of 1 to 100 values makes one statement, not 100.
   */
  oneOf(col: string): string;
  /** The parameter `oneOf` binds: the values, each as `value` binds it. */
  list(values: readonly unknown[]): unknown;
  /**
   * A column as a condition the planner checks on each row but never takes as the index range's bound
   * (`listSql`, for a filter the keyset position already bounds more tightly on the same side).
   */
  residual(col: string): string;
}

export function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export interface Sql {
  text: string;
  params: unknown[];
}

/** The computed rank column of a search (bm25: lower is better). */
export const RANK_COLUMN = '_rank';

/** Nullable unless the model says otherwise; the rank and system columns never are. */
function nullable(resource: CompiledResource, path: string): boolean {
  if (path === RANK_COLUMN) return false;
  return resource.paths.get(path)?.nullable ?? true;
}

function column(resource: CompiledResource, path: string): string {
  if (path === RANK_COLUMN) return RANK_COLUMN;
  const p = resource.paths.get(path);
  // Hidden fields (key hashes) are not query paths for clients but the services look them up.
  if (p) return quote(p.column);
  if (resource.stored.some(([name]) => name === path)) return quote(path);
  throw new Error(`unknown query path ${resource.name}.${path}`);
}

const OPS = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/** Conditions in one order whatever order they came in (by path, then operator): AND does not care, and the statement cache then holds one text per set. */
function canonical(where: Condition[]): Condition[] {
  if (where.length < 2) return where;
  return [...where].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.op < b.op ? -1 : a.op > b.op ? 1 : 0));
}

/** `residual`: the conditions written with `Dialect.residual`, checked on each row rather than bounding the index range. */
export function whereClause(d: Dialect, resource: CompiledResource, where: Condition[], tableOf: (name: string) => string, residual?: (c: Condition) => boolean): Sql {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const c of canonical(where)) {
    const col = residual?.(c) ? d.residual(column(resource, c.path)) : column(resource, c.path);
    switch (c.op) {
      case 'owned_via':
        parts.push(`${col} IN (SELECT id FROM ${quote(tableOf(c.parent))} WHERE ${quote(c.parentField)} = ?)`);
        params.push(c.value);
        break;
      case 'in': {
        const values = c.value as unknown[];
        if (values.length === 0) {
          parts.push('1 = 0');
        } else {
          parts.push(d.oneOf(col));
          params.push(d.list(values));
        }
        break;
      }
      case 'ne':
        // Null-safe: rows whose value is null are "not equal" too.
        parts.push(c.value === null ? `${col} IS NOT NULL` : `${col} ${d.differs} ?`);
        if (c.value !== null) params.push(d.value(c.value));
        break;
      default:
        if (c.op === 'eq' && c.value === null) {
          parts.push(`${col} IS NULL`);
          break;
        }
        parts.push(`${col} ${OPS[c.op]} ?`);
        params.push(d.value(c.value));
    }
  }
  return { text: parts.length ? parts.join(' AND ') : '1 = 1', params };
}

/** "Strictly after `value`" on one key, with nulls first ascending and last descending. */
function strictlyAfter(d: Dialect, col: string, desc: boolean, value: unknown, params: unknown[]): string {
  if (value === null || value === undefined) return desc ? '1 = 0' : `${col} IS NOT NULL`;
  params.push(d.value(value));
  return desc ? `(${col} < ? OR ${col} IS NULL)` : `${col} > ?`;
}

/**
 * The keyset predicate "strictly after `after` in `orderBy` order". When every key runs one way and
 * none can be null it is a row-value comparison, `(a, id) > (x, z)`, which both engines answer with
 * an index range. Otherwise it is expanded so mixed directions and nulls work —
 * (a > x) OR (a IS x AND b < y) OR (a IS x AND b IS y AND id > z) — behind a leading bound on the
 * first key (a >= x) that keeps the index range usable.
 */
export function keysetClause(d: Dialect, resource: CompiledResource, orderBy: SortKey[], after: unknown[]): Sql {
  const uniform = orderBy.every((k) => k.desc === orderBy[0]!.desc);
  const noNulls = orderBy.every((k, i) => !nullable(resource, k.path) && after[i] !== null && after[i] !== undefined);
  if (d.rowValues && uniform && noNulls) {
    const cols = orderBy.map((k) => column(resource, k.path)).join(', ');
    return { text: `(${cols}) ${orderBy[0]!.desc ? '<' : '>'} (${orderBy.map(() => '?').join(', ')})`, params: after.map((v) => d.value(v)) };
  }
  const ors: string[] = [];
  const params: unknown[] = [];
  const lead = leadingBound(d, resource, orderBy[0]!, after[0]);
  for (let i = 0; i < orderBy.length; i++) {
    const ands: string[] = [];
    for (let j = 0; j < i; j++) {
      ands.push(`${column(resource, orderBy[j]!.path)} ${d.same} ?`);
      params.push(d.value(after[j] ?? null));
    }
    ands.push(strictlyAfter(d, column(resource, orderBy[i]!.path), orderBy[i]!.desc, after[i], params));
    ors.push(`(${ands.join(' AND ')})`);
  }
  const text = `(${ors.join(' OR ')})`;
  return lead ? { text: `${lead.text} AND ${text}`, params: [...lead.params, ...params] } : { text, params };
}

/**
 * The filters a keyset position bounds on the same side as they do: a range filter on the first sort key in the
 * walk's direction (`price.amount[gte]` walking up by price). Every row after the position is past the filter's
 * bound too (the position is a row the filter let through), so the position's bound is the tighter one. Given
 * two lower bounds on one column, SQLite takes one as the index range and checks the other on each row, and it
 * takes the filter's: each page then steps from the filter's bound through every row before the position, a cost
 * that grows with the walk's depth (measured, 2,000 products: 53–70 µs a page against 27 µs with the filter left
 * as a residual check). PostgreSQL's B-tree keeps the tighter of the two by itself (`Dialect.residual` leaves its
 * columns as they are). Only where the position is an index bound itself: a value, and for a descending walk a
 * column without nulls (`leadingBound`).
 */
function boundedByPosition(resource: CompiledResource, orderBy: SortKey[], after: unknown[]): ((c: Condition) => boolean) | undefined {
  const lead = orderBy[0]!;
  if (after[0] === null || after[0] === undefined || (lead.desc && nullable(resource, lead.path))) return undefined;
  const sameSide = lead.desc ? ['lt', 'lte'] : ['gt', 'gte'];
  return (c) => c.path === lead.path && sameSide.includes(c.op);
}

/** A bound every row after the position satisfies on the first key alone, for the index's sake. */
function leadingBound(d: Dialect, resource: CompiledResource, key: SortKey, value: unknown): Sql | undefined {
  const col = column(resource, key.path);
  if (value === null || value === undefined) return key.desc ? { text: `${col} IS NULL`, params: [] } : undefined;
  if (!key.desc) return { text: `${col} >= ?`, params: [d.value(value)] };
  return nullable(resource, key.path) ? { text: `(${col} <= ? OR ${col} IS NULL)`, params: [d.value(value)] } : { text: `${col} <= ?`, params: [d.value(value)] };
}

export function orderClause(d: Dialect, resource: CompiledResource, orderBy: SortKey[]): string {
  return orderBy.map((k) => `${column(resource, k.path)} ${k.desc ? 'DESC' : 'ASC'}${d.nulls(k.desc, nullable(resource, k.path))}`).join(', ');
}

/**
 * A batch read by id (Reader.getMany): the distinct well-formed ids, at most 1000 (a loader batches per
 * request), lower case as stored, and the statement that reads them; undefined when no id is left.
 */
export function getManySql(d: Dialect, resource: CompiledResource, ids: readonly string[]): (Sql & { ids: string[] }) | undefined {
  const wanted = [...new Set(ids.map((id) => id.toLowerCase()).filter((id) => UUID.test(id)))];
  if (wanted.length > 1000) throw new Error(`getMany reads at most 1000 ids at once, not ${wanted.length}`);
  if (wanted.length === 0) return undefined;
  return { text: `SELECT ${d.columns(resource)} FROM ${quote(resource.table)} WHERE ${d.oneOf('id')}`, params: [d.list(wanted)], ids: wanted };
}

/** `records` in the order of `ids` (SQL returns them in any order). */
export function inOrder(ids: readonly string[], records: StoredRecord[]): StoredRecord[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    return r ? [r] : [];
  });
}

/** `SELECT COALESCE(SUM(a * b …), 0) AS total` over the matching rows: integer columns stay integers in both engines. */
export function sumSql(d: Dialect, resource: CompiledResource, where: Condition[], factors: string[], tableOf: (name: string) => string): Sql {
  const w = whereClause(d, resource, where, tableOf);
  return { text: `SELECT COALESCE(SUM(${factors.map((f) => column(resource, f)).join(' * ')}), 0) AS total FROM ${quote(resource.table)} WHERE ${w.text}`, params: w.params };
}

/**
 * A list's page statement and its count. `select`: the page's select list instead of every column (never with a
 * search, whose rank the full list carries): SqliteOps.list reads a page's row versions alone first. Given as a
 * function of the count, it may hold a scalar subquery (its parameters bound before the rest): PgOps puts a page's
 * total in the page's own statement.
 */
export function listSql(
  d: Dialect,
  resource: CompiledResource,
  q: ListQuery,
  tableOf: (name: string) => string,
  select: string | ((count: Sql) => Sql) = d.columns(resource),
): { page: Sql; count: Sql } | undefined {
  let from: Sql = { text: quote(resource.table), params: [] };
  if (q.search !== undefined) {
    const searched = d.searchSource(resource, q.search);
    if (!searched) return undefined;
    from = searched;
  }
  const where = whereClause(d, resource, q.where, tableOf);
  const count: Sql = { text: `SELECT COUNT(*) AS n FROM ${from.text} WHERE ${where.text}`, params: [...from.params, ...where.params] };
  const selected = typeof select === 'string' ? { text: select, params: [] } : select(count);
  const bounded = q.after ? boundedByPosition(resource, q.orderBy, q.after) : undefined;
  const filter = bounded && q.where.some(bounded) ? whereClause(d, resource, q.where, tableOf, bounded) : where;
  // Everything after the select list: a deep offset page selects the row keys of it alone (`deferred`).
  let rest = ` FROM ${from.text} WHERE ${filter.text}`;
  const params = [...selected.params, ...from.params, ...filter.params];
  if (q.after) {
    const k = keysetClause(d, resource, q.orderBy, q.after);
    rest += ` AND ${k.text}`;
    params.push(...k.params);
  }
  const order = orderClause(d, resource, q.orderBy);
  rest += ` ORDER BY ${order} LIMIT ?`;
  params.push(q.limit);
  if (q.offset) {
    rest += ' OFFSET ?';
    params.push(q.offset);
    if (q.offset >= DEFERRED_FROM_OFFSET && q.search === undefined && !q.skipLocked) return { page: deferred(d, resource, rest, order, params, selected.text), count };
  }
  if (q.skipLocked) rest += d.skipLocked;
  return { page: { text: `SELECT ${q.search !== undefined ? '*' : selected.text}${rest}`, params }, count };
}

/**
 * From this offset on, a page's rows are found by their keys alone, then read (`deferred`). Measured (issue 31.6,
 * docs/BENCHMARKS.md), 100,000 products: SQLite's offset 49,990 by id 1.43 → 0.52 ms, a filtered page sorted
 * by price at offset 8,332 16.9 → 3.0 ms; PostgreSQL 14.0 → 3.2 ms and 18.1 → 2.4 ms. Below a few hundred rows the
 * plain statement is as fast or faster (PostgreSQL's plan for the join costs more than the rows it skips).
 */
export const DEFERRED_FROM_OFFSET = 1_000;

/**
 * A deep offset page as a "deferred join": `SELECT … WHERE key IN (SELECT key … ORDER BY … LIMIT ? OFFSET ?)`. Both
 * engines step over an OFFSET by producing each row it skips: with every column asked for, that is a table read per
 * skipped row (and, for an order no index gives whole, a sort of full rows). Asking only for the key, the skipped
 * rows come from the index alone (its entries hold the key: SQLite's rowid, PostgreSQL's primary key), and only the
 * page's rows are read. One statement, one snapshot: the same rows in the same order (the order is total, ending
 * with id).
 */
function deferred(d: Dialect, resource: CompiledResource, rest: string, order: string, params: unknown[], select: string): Sql {
  return { text: `SELECT ${select} FROM ${quote(resource.table)} WHERE ${d.rowKey} IN (SELECT ${d.rowKey}${rest}) ORDER BY ${order}`, params };
}

/** The columns a group statement adds to each row: its place in its group (from 1) and the group's size. */
export const GROUP_ROW = '_group_row';
export const GROUP_TOTAL = '_group_total';

/**
 * Reader.listGroups: every group's first rows in one statement, by window functions (SQLite 3.25+, PostgreSQL):
 * the rows numbered within their group in the group's order, counted per group, and the first `limit` of
 * each kept; rows come ordered by group, then by their place. Undefined when no group is asked for.
 */
export function groupsSql(d: Dialect, resource: CompiledResource, q: GroupQuery, tableOf: (name: string) => string): Sql | undefined {
  const values = [...new Set(q.values)];
  if (values.length === 0) return undefined;
  if (values.length > 1000) throw new Error(`listGroups reads at most 1000 groups at once, not ${values.length}`);
  const where = whereClause(d, resource, [{ path: q.field, op: 'in', value: values }, ...q.where], tableOf);
  const group = column(resource, q.field);
  const inner =
    `SELECT ${d.columns(resource)}, ROW_NUMBER() OVER (PARTITION BY ${group} ORDER BY ${orderClause(d, resource, q.orderBy)}) AS ${GROUP_ROW}, ` +
    `COUNT(*) OVER (PARTITION BY ${group}) AS ${GROUP_TOTAL} FROM ${quote(resource.table)} WHERE ${where.text}`;
  return { text: `SELECT * FROM (${inner}) AS g WHERE ${GROUP_ROW} <= ? ORDER BY ${group}, ${GROUP_ROW}`, params: [...where.params, q.limit] };
}
