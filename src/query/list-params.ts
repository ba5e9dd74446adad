// Pure parsing of collection query parameters (DESIGN §6) into a list plan; every problem becomes one 400 detail.
import { createHash } from 'node:crypto';
import { AppError, type ErrorDetail } from '../errors/app-error.js';
import type { CompiledResource } from '../model/compile.js';
import type { Condition, ConditionOp, SortKey } from '../store/types.js';
import { signToken, verifyToken } from './tokens.js';
import { parseValue } from './values.js';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
const OPS: ReadonlySet<string> = new Set(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in']);
const MAX_IN = 100;
/** Parameters of pagination styles that arrive with the collections issue; rejected clearly until then. */
const LATER_STYLES = ['offset', 'page', 'per_page', 'page_size', 'page_token', 'after_id'];

export interface ListPlan {
  where: Condition[];
  orderBy: SortKey[];
  limit: number;
  after?: unknown[];
  fields?: string[];
  /** Identifies the filters and sort, so a cursor is only accepted for the list it was made for. */
  shape: string;
}

interface CursorPayload {
  v: 1;
  s: string;
  a: unknown[];
}

export type QueryInput = Record<string, string | string[] | undefined>;

function single(details: ErrorDetail[], name: string, value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) {
    details.push({ field: name, message: 'must be given once', value });
    return undefined;
  }
  return value;
}

function parseLimit(details: ErrorDetail[], raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  if (!/^\d{1,6}$/.test(raw)) {
    details.push({ field: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}`, value: raw });
    return DEFAULT_LIMIT;
  }
  const n = Number(raw);
  if (n < 1 || n > MAX_LIMIT) details.push({ field: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}`, value: raw });
  return n;
}

function parseSort(details: ErrorDetail[], r: CompiledResource, raw: string | undefined): SortKey[] {
  const keys: SortKey[] = [];
  if (raw !== undefined) {
    for (const part of raw.split(',')) {
      const desc = part.startsWith('-');
      const path = desc ? part.slice(1) : part;
      const p = r.paths.get(path);
      if (!p || !p.sortable) {
        details.push({ field: 'sort', message: `${path || '(empty)'} is not a sortable field of ${r.name}`, value: part });
        continue;
      }
      if (keys.some((k) => k.path === path)) {
        details.push({ field: 'sort', message: `${path} appears twice`, value: part });
        continue;
      }
      keys.push({ path, desc });
    }
  }
  // Ties are always broken by id, so the order is total and keyset pages never skip or repeat.
  if (!keys.some((k) => k.path === 'id')) keys.push({ path: 'id', desc: false });
  return keys.slice(0, keys.findIndex((k) => k.path === 'id') + 1);
}

function parseFields(details: ErrorDetail[], r: CompiledResource, raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const fields: string[] = [];
  for (const name of raw.split(',')) {
    if (!r.rendered.includes(name)) details.push({ field: 'fields', message: `${name || '(empty)'} is not a field of ${r.name}`, value: name });
    else if (!fields.includes(name)) fields.push(name);
  }
  return fields;
}

/** `field=value`, `field[op]=value`, `price.amount[gte]=100`. */
function parseFilter(details: ErrorDetail[], r: CompiledResource, key: string, raw: string): Condition | undefined {
  const m = /^([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?)(?:\[([a-z]+)\])?$/.exec(key);
  const path = m ? r.paths.get(m[1]!) : undefined;
  if (!m || !path || !path.filterable) {
    details.push({ field: key, message: `is not a filterable field of ${r.name}`, value: raw });
    return undefined;
  }
  const op = (m[2] ?? 'eq') as ConditionOp;
  if (!OPS.has(op)) {
    details.push({ field: key, message: `unknown operator ${m[2]}; use one of ${[...OPS].join(', ')}`, value: raw });
    return undefined;
  }
  if (op === 'in') {
    const parts = raw.split(',');
    if (parts.length > MAX_IN) {
      details.push({ field: key, message: `takes at most ${MAX_IN} values`, value: raw });
      return undefined;
    }
    const values: unknown[] = [];
    for (const part of parts) {
      const v = parseValue(path, part);
      if (!v.ok) {
        details.push({ field: key, message: v.message, value: part });
        return undefined;
      }
      values.push(v.value);
    }
    return { path: path.path, op, value: values };
  }
  const v = parseValue(path, raw);
  if (!v.ok) {
    details.push({ field: key, message: v.message, value: raw });
    return undefined;
  }
  return { path: path.path, op, value: v.value };
}

const RESERVED = new Set(['limit', 'cursor', 'sort', 'fields', 'q']);

export function parseListParams(r: CompiledResource, query: QueryInput, secret: string, ignore: ReadonlySet<string> = new Set()): ListPlan {
  const details: ErrorDetail[] = [];
  const where: Condition[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (RESERVED.has(key) || ignore.has(key)) continue;
    if (LATER_STYLES.includes(key)) {
      details.push({ field: key, message: 'this pagination style is not available yet; use limit and cursor', value });
      continue;
    }
    const raw = single(details, key, value);
    if (raw === undefined) continue;
    const c = parseFilter(details, r, key, raw);
    if (c) where.push(c);
  }
  if (query.q !== undefined) details.push({ field: 'q', message: 'free-text search is not available yet', value: query.q });
  const limit = parseLimit(details, single(details, 'limit', query.limit));
  const orderBy = parseSort(details, r, single(details, 'sort', query.sort));
  const fields = parseFields(details, r, single(details, 'fields', query.fields));
  const shape = shapeOf(where, orderBy);
  let after: unknown[] | undefined;
  const cursor = single(details, 'cursor', query.cursor);
  if (cursor !== undefined) {
    const payload = verifyToken(cursor, secret) as CursorPayload | undefined;
    if (!payload || payload.v !== 1 || !Array.isArray(payload.a) || typeof payload.s !== 'string') {
      details.push({ field: 'cursor', message: 'is not a valid cursor for this list', value: cursor });
    } else if (payload.s !== shape) {
      details.push({ field: 'cursor', message: 'was made for other filters or another sort', value: cursor });
    } else if (payload.a.length !== orderBy.length) {
      details.push({ field: 'cursor', message: 'is not a valid cursor for this list', value: cursor });
    } else {
      after = payload.a;
    }
  }
  if (details.length) throw new AppError('INVALID_QUERY', 'The query parameters are invalid.', { details });
  return { where, orderBy, limit, ...(after ? { after } : {}), ...(fields ? { fields } : {}), shape };
}

function shapeOf(where: Condition[], orderBy: SortKey[]): string {
  const text = JSON.stringify([where.map((c) => [c.path, c.op, c.value]).sort(), orderBy.map((k) => [k.path, k.desc])]);
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}

/** The cursor continuing after `last`, in the plan's order. */
export function nextCursor(plan: ListPlan, last: Record<string, unknown>, secret: string): string {
  const values = plan.orderBy.map((k) => valueAt(last, k.path));
  return signToken({ v: 1, s: plan.shape, a: values } satisfies CursorPayload, secret);
}

function valueAt(record: Record<string, unknown>, path: string): unknown {
  const dot = path.indexOf('.');
  if (dot < 0) return record[path] ?? null;
  const outer = record[path.slice(0, dot)] as Record<string, unknown> | null | undefined;
  return outer ? (outer[path.slice(dot + 1)] ?? null) : null;
}
