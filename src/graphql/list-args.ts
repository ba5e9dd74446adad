// A connection's arguments (first, after, filter, sort, q) as the list plan REST's parameters make, parsed by the same query layer (DESIGN §6, §7).
import { AppError, isAppError, type ErrorDetail } from '../errors/app-error.js';
import type { CompiledResource } from '../model/compile.js';
import { parseListParams, type ListPlan, type QueryInput } from '../query/list-params.js';
import { FILTER_OPERATORS } from '../query/list-parameters.js';
import { PlanMemo } from '../query/plan-memo.js';
import { fieldName, modelName, schemaPath } from './names.js';

/** The operators of a field's filter input (`{ eq ne gt gte lt lte in }`): REST's, plain equality as `eq`. */
export const OPERATORS = ['eq', ...FILTER_OPERATORS] as const;

export interface ListArgs {
  first?: number | null;
  after?: string | null;
  filter?: Record<string, unknown> | null;
  sort?: string | null;
  q?: string | null;
}

/** The filter input's field for a query path, and its part inside a money field: `price.amount` → [`price`, `amount`]. */
export function filterPath(path: string): [string, string | undefined] {
  const [outer, inner] = path.split('.', 2) as [string, string | undefined];
  return [fieldName(outer), inner === undefined ? undefined : fieldName(inner)];
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

/**
 * REST's query parameters for the arguments: `first` as `limit`, `after` as `cursor`, each filter operator as
 * `path[op]` (`path` for eq), `sort` in model names. A value `in` takes is comma-separated in REST; one holding a
 * comma cannot be said there, so it is refused here rather than split.
 */
function queryInputOf(r: CompiledResource, args: ListArgs, details: ErrorDetail[]): QueryInput {
  const input: QueryInput = {};
  if (args.first !== undefined && args.first !== null) input.limit = String(args.first);
  if (args.after !== undefined && args.after !== null) input.cursor = args.after;
  if (args.q !== undefined && args.q !== null) input.q = args.q;
  if (args.sort !== undefined && args.sort !== null) {
    input.sort = args.sort
      .split(',')
      .map((key) => (key.startsWith('-') ? `-${modelPath(key.slice(1))}` : modelPath(key)))
      .join(',');
  }
  for (const p of r.paths.values()) {
    if (!p.filterable) continue;
    const [outer, inner] = filterPath(p.path);
    const group = args.filter?.[outer] as Record<string, unknown> | null | undefined;
    const ops = (inner === undefined ? group : (group?.[inner] as Record<string, unknown> | null | undefined)) ?? undefined;
    if (!ops) continue;
    for (const op of OPERATORS) {
      const value = ops[op];
      // An explicit null sets no condition, as an argument left out.
      if (value === undefined || value === null) continue;
      const key = op === 'eq' ? p.path : `${p.path}[${op}]`;
      if (op === 'in') {
        const values = (value as unknown[]).map(text);
        const comma = values.find((v) => v.includes(','));
        if (comma !== undefined) details.push({ field: argumentOf(`${p.path}[in]`), message: 'values may not hold a comma', value: comma });
        else input[key] = values.join(',');
      } else {
        input[key] = text(value);
      }
    }
  }
  return input;
}

/** `createdAt` → `created_at`, `price.amount` stays: a sort key in model names (unknown ones are refused by the parser, named). */
function modelPath(path: string): string {
  return path
    .split('.')
    .map((segment) => modelName(segment))
    .join('.');
}

/** The argument a REST parameter stands for, as an error detail names it: `limit` → `first`, `price.amount[gte]` → `filter.price.amount.gte`. */
export function argumentOf(parameter: string): string {
  if (parameter === 'limit') return 'first';
  if (parameter === 'cursor') return 'after';
  if (parameter === 'sort' || parameter === 'q') return parameter;
  const m = /^([^[]+)(?:\[([a-z]+)\])?$/.exec(parameter);
  if (!m) return parameter;
  return `filter.${schemaPath(m[1]!)}.${m[2] ?? 'eq'}`;
}

/** Plans by scope and arguments, as REST keeps its own by query string (src/query/plan-memo.ts). */
const memo = new PlanMemo();

/**
 * The plan of a connection: the same parsing, bounds and signed cursors as a REST list, bound to `scope` (the
 * collection: a cursor of one connection is refused by any other). Problems are INVALID_QUERY with details
 * named as the arguments are. Kept, frozen, by scope and arguments: a client asks for the same page shape again
 * and again.
 */
export function planOf(r: CompiledResource, args: ListArgs, secret: string, scope: string): ListPlan {
  return memo.plan(r, `${scope}\n${JSON.stringify(args)}`, secret, () => parsedPlan(r, args, secret, scope));
}

function parsedPlan(r: CompiledResource, args: ListArgs, secret: string, scope: string): ListPlan {
  const details: ErrorDetail[] = [];
  const input = queryInputOf(r, args, details);
  if (details.length) throw new AppError('INVALID_QUERY', 'The arguments are invalid.', { details });
  try {
    return parseListParams(r, input, secret, scope);
  } catch (err) {
    if (!isAppError(err) || !err.details) throw err;
    throw new AppError(err.code, 'The arguments are invalid.', { details: err.details.map((d) => ({ ...d, field: argumentOf(d.field) })) });
  }
}
