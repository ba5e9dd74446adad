// The parameters of a GraphQL-over-HTTP request (https://graphql.github.io/graphql-over-http/draft/ §5): from a JSON body or a GET query; anything else is not a GraphQL request (400).
import { AppError } from '../errors/app-error.js';

export interface GraphqlParams {
  /** Absent when a persisted query's hash stands for it. */
  query: string | undefined;
  variables: Record<string, unknown> | null;
  operationName: string | null;
  extensions: Record<string, unknown> | null;
}

/** A request that is no GraphQL request at all: 400 in the uniform error body (DESIGN §7), naming what is wrong. */
function notGraphql(field: string, message: string, value?: unknown): AppError {
  return new AppError('BAD_REQUEST', `This is not a GraphQL request: ${field} ${message}.`, { details: [{ field, message, ...(value !== undefined ? { value } : {}) }] });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalText(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw notGraphql(field, 'must be a string');
  return value;
}

function optionalObject(value: unknown, field: string): Record<string, unknown> | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw notGraphql(field, 'must be a JSON object');
  return value;
}

/** Whether the extensions name a persisted query (then `query` may be left out). */
function persisted(extensions: Record<string, unknown> | null): boolean {
  return isObject(extensions?.persistedQuery);
}

function checked(params: GraphqlParams): GraphqlParams {
  if (params.query === undefined && !persisted(params.extensions)) throw notGraphql('query', 'is missing (or extensions.persistedQuery, for a registered query)');
  return params;
}

/** POST: a JSON object with `query`, and optionally `variables`, `operationName` and `extensions` (§5.1); other keys are left alone. */
export function paramsFromBody(body: unknown): GraphqlParams {
  if (!isObject(body)) throw notGraphql('(body)', 'must be a JSON object');
  const query = optionalText(body.query, 'query');
  return checked({
    query: query ?? undefined,
    variables: optionalObject(body.variables, 'variables'),
    operationName: optionalText(body.operationName, 'operationName'),
    extensions: optionalObject(body.extensions, 'extensions'),
  });
}

/** A query parameter that holds JSON (`variables`, `extensions`, §5.2). */
function jsonParameter(value: string | undefined, field: string): Record<string, unknown> | null {
  if (value === undefined || value === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw notGraphql(field, 'must be JSON', value.slice(0, 100));
  }
  return optionalObject(parsed, field);
}

/** GET: `query`, and `variables` and `extensions` as JSON text, `operationName` (§5.2); each at most once. */
export function paramsFromQuery(query: Record<string, string | string[] | undefined>): GraphqlParams {
  const one = (name: string): string | undefined => {
    const value = query[name];
    if (Array.isArray(value)) throw notGraphql(name, 'must be given once');
    return value;
  };
  const operationName = one('operationName');
  return checked({
    query: one('query'),
    variables: jsonParameter(one('variables'), 'variables'),
    operationName: operationName === undefined || operationName === '' ? null : operationName,
    extensions: jsonParameter(one('extensions'), 'extensions'),
  });
}
