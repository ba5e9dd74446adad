// Pure parsing of collection query parameters (DESIGN §6) into a list plan; every problem becomes one 400 detail.
import { createHash } from 'node:crypto';
import { AppError, type ErrorDetail } from '../errors/app-error.js';
import { valueAt } from '../lib/field-path.js';
import type { CompiledResource } from '../model/compile.js';
import type { Condition, SortKey } from '../model/records.js';
import { parseFilter } from './filters.js';
import { MAX_SEARCH } from './list-parameters.js';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, PAGINATION_PARAMS, decodePosition, detectStyle, encodePosition, parseCount, type PageRequest } from './pagination.js';

export { DEFAULT_LIMIT, MAX_LIMIT };

/** The sort path of the full-text rank; it exists only in searches. */
export const RANK = '_rank';

export interface ListPlan {
  where: Condition[];
  orderBy: SortKey[];
  /** Free text for `q`, ranked over the searchable fields. */
  search?: string;
  fields?: string[];
  page: PageRequest;
  /**
   * Identifies the filters, sort and search, so a cursor is only accepted for the list it was made for. Only the
   * styles with cursors or page tokens have one (a digest per parsed query: worth skipping where nothing uses it);
   * for the others it is empty.
   */
  shape: string;
}

export type QueryInput = Record<string, string | string[] | undefined>;

function single(details: ErrorDetail[], name: string, value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) {
    details.push({ field: name, message: 'must be given once', value });
    return undefined;
  }
  return value;
}

function parseSort(details: ErrorDetail[], r: CompiledResource, raw: string | undefined, searching: boolean): SortKey[] {
  const keys: SortKey[] = [];
  if (raw === undefined) {
    // A search without an explicit sort is ordered best match first.
    if (searching) keys.push({ path: RANK, desc: false });
  } else {
    for (const part of raw.split(',')) {
      const desc = part.startsWith('-');
      const path = desc ? part.slice(1) : part;
      const p = r.paths.get(path);
      if (!p || !p.sortable) {
        details.push({ field: 'sort', message: `${path || '(empty)'} is not a sortable field of ${r.name}`, value: part });
      } else if (keys.some((k) => k.path === path)) {
        details.push({ field: 'sort', message: `${path} appears twice`, value: part });
      } else {
        keys.push({ path, desc });
      }
    }
  }
  // Ties are always broken by id, so the order is total and keyset pages never skip or repeat. The
  // tie-break runs in the first key's direction, so a (column, id) index can serve the whole order.
  const idAt = keys.findIndex((k) => k.path === 'id');
  return idAt >= 0 ? keys.slice(0, idAt + 1) : [...keys, { path: 'id', desc: keys[0]?.desc ?? false }];
}

/** `rendered`: the fields the request's version shows (sparse fields pick from its view). */
function parseFields(details: ErrorDetail[], r: CompiledResource, rendered: readonly string[], raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const fields: string[] = [];
  for (const name of raw.split(',')) {
    if (!rendered.includes(name)) details.push({ field: 'fields', message: `${name || '(empty)'} is not a field of ${r.name}`, value: name });
    else if (!fields.includes(name)) fields.push(name);
  }
  return fields;
}

function parseSearch(details: ErrorDetail[], r: CompiledResource, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (r.searchable.length === 0) details.push({ field: 'q', message: `${r.name} has no searchable fields`, value: raw });
  else if (raw.trim() === '' || raw.length > MAX_SEARCH) details.push({ field: 'q', message: `must be 1 to ${MAX_SEARCH} characters`, value: raw });
  return raw;
}

function parsePage(details: ErrorDetail[], query: QueryInput, orderBy: SortKey[], shape: () => string, secret: string): PageRequest {
  const present = new Set(Object.keys(query).filter((k) => PAGINATION_PARAMS.has(k) && query[k] !== undefined));
  const get = (name: string): string | undefined => single(details, name, query[name]);
  const style = detectStyle(present, details);
  switch (style) {
    case 'offset':
      return { style, limit: parseCount(details, 'limit', get('limit'), DEFAULT_LIMIT, 1, MAX_LIMIT), offset: parseCount(details, 'offset', get('offset'), 0, 0, MAX_OFFSET) };
    case 'page': {
      const limit = parseCount(details, 'per_page', get('per_page'), DEFAULT_LIMIT, 1, MAX_LIMIT);
      const page = parseCount(details, 'page', get('page'), 1, 1, Math.floor(MAX_OFFSET / limit) + 1);
      return { style, limit, page, offset: (page - 1) * limit };
    }
    case 'keyset': {
      const limit = parseCount(details, 'limit', get('limit'), DEFAULT_LIMIT, 1, MAX_LIMIT);
      const afterId = get('after_id');
      if (orderBy.length !== 1) details.push({ field: 'after_id', message: 'pages by id only; use cursor pagination with sort, q or other orders' });
      if (afterId !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(afterId)) {
        details.push({ field: 'after_id', message: 'must be a UUID', value: afterId });
        return { style, limit };
      }
      return afterId === undefined ? { style, limit } : { style, limit, afterId: afterId.toLowerCase() };
    }
    case 'token': {
      const limit = parseCount(details, 'page_size', get('page_size'), DEFAULT_LIMIT, 1, MAX_LIMIT);
      const token = get('page_token');
      const after = token === undefined ? undefined : decodePosition(details, 'page_token', 'token', token, shape(), orderBy.length, secret);
      return after ? { style, limit, after } : { style, limit };
    }
    case 'cursor': {
      const limit = parseCount(details, 'limit', get('limit'), DEFAULT_LIMIT, 1, MAX_LIMIT);
      const cursor = get('cursor');
      const after = cursor === undefined ? undefined : decodePosition(details, 'cursor', 'cursor', cursor, shape(), orderBy.length, secret);
      return after ? { style, limit, after } : { style, limit };
    }
  }
}

const RESERVED = new Set(['sort', 'fields', 'q']);

/**
 * `scope` names what is paged beyond the query itself (the version, the resource, the parent of a nested
 * route): it is bound into every cursor and page token with the filters, sort and search, so a token from
 * one collection is 400 on any other.
 */
export function parseListParams(r: CompiledResource, query: QueryInput, secret: string, scope = r.name, rendered: readonly string[] = r.rendered): ListPlan {
  const details: ErrorDetail[] = [];
  const where: Condition[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (RESERVED.has(key) || PAGINATION_PARAMS.has(key) || value === undefined) continue;
    const raw = single(details, key, value);
    if (raw === undefined) continue;
    const c = parseFilter(details, r, key, raw);
    if (c) where.push(c);
  }
  const search = parseSearch(details, r, single(details, 'q', query.q));
  const orderBy = parseSort(details, r, single(details, 'sort', query.sort), search !== undefined);
  const fields = parseFields(details, r, rendered, single(details, 'fields', query.fields));
  let shape: string | undefined;
  const shapeNow = (): string => (shape ??= shapeOf(scope, where, orderBy, search));
  const page = parsePage(details, query, orderBy, shapeNow, secret);
  if (details.length) throw new AppError('INVALID_QUERY', 'The query parameters are invalid.', { details });
  if (page.style === 'cursor' || page.style === 'token') shapeNow();
  return { where, orderBy, ...(search !== undefined ? { search } : {}), ...(fields ? { fields } : {}), page, shape: shape ?? '' };
}

/**
 * The plan of the same query with `cursor` added, from `plan`, the query parsed without it (a cursor-style plan): what
 * parseListParams gives for the whole query, a cursor's refusal included (it is the only detail then, as `plan`
 * had none). A walk's every page has a new cursor, so its URL is new each time; its filters, sort and fields are not.
 */
export function withCursor(plan: ListPlan, cursor: string, secret: string): ListPlan {
  if (plan.page.style !== 'cursor') throw new Error('withCursor takes a cursor-style plan');
  const details: ErrorDetail[] = [];
  const after = decodePosition(details, 'cursor', 'cursor', cursor, plan.shape, plan.orderBy.length, secret);
  if (details.length) throw new AppError('INVALID_QUERY', 'The query parameters are invalid.', { details });
  return Object.freeze({ ...plan, page: Object.freeze({ style: 'cursor' as const, limit: plan.page.limit, after: Object.freeze(after!) as unknown[] }) });
}

/**
 * The plan of the same query with `offset` in it, from `plan`, the query parsed at offset 0 (an offset-style plan):
 * what parseListParams gives for the whole query, an offset's refusal included (the only detail then, as `plan` had
 * none). Random offsets are as many URLs; their filters, sort and fields are not.
 */
export function withOffset(plan: ListPlan, offset: string): ListPlan {
  if (plan.page.style !== 'offset') throw new Error('withOffset takes an offset-style plan');
  const details: ErrorDetail[] = [];
  const n = parseCount(details, 'offset', offset, 0, 0, MAX_OFFSET);
  if (details.length) throw new AppError('INVALID_QUERY', 'The query parameters are invalid.', { details });
  return Object.freeze({ ...plan, page: Object.freeze({ ...plan.page, offset: n }) });
}

function shapeOf(scope: string, where: Condition[], orderBy: SortKey[], search: string | undefined): string {
  const text = JSON.stringify([scope, where.map((c) => JSON.stringify([c.path, c.op, c.value])).sort(), orderBy.map((k) => [k.path, k.desc]), search ?? null]);
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}

/** The position after `last` in the plan's order: the values of its sort keys (the rank included). */
export function positionAfter(plan: ListPlan, last: Record<string, unknown>, rank: number | undefined): unknown[] {
  return plan.orderBy.map((k) => (k.path === RANK ? (rank ?? null) : valueAt(last, k.path)));
}

export function encodeNext(plan: ListPlan, last: Record<string, unknown>, rank: number | undefined, secret: string): string {
  return encodePosition(plan.page.style === 'token' ? 'token' : 'cursor', plan.shape, positionAfter(plan, last, rank), secret);
}
