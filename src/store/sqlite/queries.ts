// Builds parameterised SQL for conditions, ordering and keyset positions; client values only ever travel as bound parameters.
import type { CompiledResource } from '../../model/compile.js';
import type { Condition, ListQuery, SortKey } from '../types.js';
import { ftsTable, quote } from './ddl.js';
import { bm25Weights, matchExpression } from './search.js';
import { toSqlValue } from './rows.js';

export interface Sql {
  text: string;
  params: unknown[];
}

/** The computed rank column of a search (bm25: lower is better). */
export const RANK_COLUMN = '_rank';

function column(resource: CompiledResource, path: string): string {
  if (path === RANK_COLUMN) return RANK_COLUMN;
  const p = resource.paths.get(path);
  // Hidden fields (key hashes) are not query paths for clients but the services look them up.
  if (p) return quote(p.column);
  if (resource.stored.some(([name]) => name === path)) return quote(path);
  throw new Error(`unknown query path ${resource.name}.${path}`);
}

const OPS = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

export function whereClause(resource: CompiledResource, where: Condition[], tableOf: (name: string) => string): Sql {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const c of where) {
    const col = column(resource, c.path);
    switch (c.op) {
      case 'owned_via':
        parts.push(`${col} IN (SELECT id FROM ${quote(tableOf(c.parent))} WHERE ${quote(c.parentField)} = ?)`);
        params.push(c.value);
        break;
      case 'in': {
        const values = c.value as unknown[];
        if (values.length === 0) {
          parts.push('0');
        } else {
          parts.push(`${col} IN (${values.map(() => '?').join(', ')})`);
          params.push(...values.map(toSqlValue));
        }
        break;
      }
      case 'ne':
        // Null-safe: rows whose value is null are "not equal" too.
        parts.push(c.value === null ? `${col} IS NOT NULL` : `${col} IS NOT ?`);
        if (c.value !== null) params.push(toSqlValue(c.value));
        break;
      default:
        if (c.op === 'eq' && c.value === null) {
          parts.push(`${col} IS NULL`);
          break;
        }
        parts.push(`${col} ${OPS[c.op]} ?`);
        params.push(toSqlValue(c.value));
    }
  }
  return { text: parts.length ? parts.join(' AND ') : '1', params };
}

/** "Strictly after `value`" on one key, knowing SQLite sorts nulls first ascending and last descending. */
function strictlyAfter(col: string, desc: boolean, value: unknown, params: unknown[]): string {
  if (value === null || value === undefined) return desc ? '0' : `${col} IS NOT NULL`;
  params.push(toSqlValue(value));
  return desc ? `(${col} < ? OR ${col} IS NULL)` : `${col} > ?`;
}

/**
 * The keyset predicate "strictly after `after` in `orderBy` order", expanded so that mixed
 * directions and nulls work: (a > x) OR (a IS x AND b < y) OR (a IS x AND b IS y AND id > z).
 */
export function keysetClause(resource: CompiledResource, orderBy: SortKey[], after: unknown[]): Sql {
  const ors: string[] = [];
  const params: unknown[] = [];
  for (let i = 0; i < orderBy.length; i++) {
    const ands: string[] = [];
    for (let j = 0; j < i; j++) {
      ands.push(`${column(resource, orderBy[j]!.path)} IS ?`);
      params.push(toSqlValue(after[j] ?? null));
    }
    ands.push(strictlyAfter(column(resource, orderBy[i]!.path), orderBy[i]!.desc, after[i], params));
    ors.push(`(${ands.join(' AND ')})`);
  }
  return { text: `(${ors.join(' OR ')})`, params };
}

export function orderClause(resource: CompiledResource, orderBy: SortKey[]): string {
  return orderBy.map((k) => `${column(resource, k.path)} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
}

/** The rows a list reads from: the table, or with a search the matching rows and their rank. */
function source(resource: CompiledResource, match: string | undefined): Sql {
  const table = quote(resource.table);
  if (match === undefined) return { text: table, params: [] };
  const fts = quote(ftsTable(resource));
  return {
    text: `(SELECT t.*, bm25(${fts}, ${bm25Weights(resource.searchable.length)}) AS ${RANK_COLUMN} FROM ${table} AS t JOIN ${fts} ON ${fts}.rowid = t.rid WHERE ${fts} MATCH ?)`,
    params: [match],
  };
}

export function listSql(resource: CompiledResource, q: ListQuery, tableOf: (name: string) => string): { page: Sql; count: Sql } | undefined {
  let match: string | undefined;
  if (q.search !== undefined) {
    match = matchExpression(q.search);
    if (match === undefined) return undefined;
  }
  const from = source(resource, match);
  const where = whereClause(resource, q.where, tableOf);
  const count: Sql = { text: `SELECT COUNT(*) AS n FROM ${from.text} WHERE ${where.text}`, params: [...from.params, ...where.params] };
  let text = `SELECT * FROM ${from.text} WHERE ${where.text}`;
  const params = [...from.params, ...where.params];
  if (q.after) {
    const k = keysetClause(resource, q.orderBy, q.after);
    text += ` AND ${k.text}`;
    params.push(...k.params);
  }
  text += ` ORDER BY ${orderClause(resource, q.orderBy)} LIMIT ?`;
  params.push(q.limit);
  if (q.offset) {
    text += ' OFFSET ?';
    params.push(q.offset);
  }
  return { page: { text, params }, count };
}
