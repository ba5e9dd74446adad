// Builds parameterised SQL for conditions, ordering and keyset positions; client values only ever travel as bound parameters.
import type { CompiledResource } from '../../model/compile.js';
import type { Condition, ListQuery, SortKey } from '../types.js';
import { quote } from './ddl.js';
import { toSqlValue } from './rows.js';

export interface Sql {
  text: string;
  params: unknown[];
}

function column(resource: CompiledResource, path: string): string {
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

/**
 * The keyset predicate "strictly after `after` in `orderBy` order", expanded so that mixed
 * directions work: (a > x) OR (a = x AND b < y) OR (a = x AND b = y AND id > z).
 */
export function keysetClause(resource: CompiledResource, orderBy: SortKey[], after: unknown[]): Sql {
  const ors: string[] = [];
  const params: unknown[] = [];
  for (let i = 0; i < orderBy.length; i++) {
    const ands: string[] = [];
    for (let j = 0; j < i; j++) {
      ands.push(`${column(resource, orderBy[j]!.path)} = ?`);
      params.push(toSqlValue(after[j]));
    }
    ands.push(`${column(resource, orderBy[i]!.path)} ${orderBy[i]!.desc ? '<' : '>'} ?`);
    params.push(toSqlValue(after[i]));
    ors.push(`(${ands.join(' AND ')})`);
  }
  return { text: `(${ors.join(' OR ')})`, params };
}

export function orderClause(resource: CompiledResource, orderBy: SortKey[]): string {
  return orderBy.map((k) => `${column(resource, k.path)} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
}

export function listSql(resource: CompiledResource, q: ListQuery, tableOf: (name: string) => string): { page: Sql; count: Sql } {
  const where = whereClause(resource, q.where, tableOf);
  const table = quote(resource.table);
  const count: Sql = { text: `SELECT COUNT(*) AS n FROM ${table} WHERE ${where.text}`, params: where.params };
  let text = `SELECT * FROM ${table} WHERE ${where.text}`;
  const params = [...where.params];
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
