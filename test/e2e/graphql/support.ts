// GraphQL test helpers: a real client (graphql-request) against a listening server, REST beside it, and the store's reads counted.
import assert from 'node:assert/strict';
import { ClientError, GraphQLClient } from 'graphql-request';
import { ADMIN_KEY, type TestServer } from '../../support/harness.js';
import type { Store } from '../../../src/store/types.js';

export interface GqlError {
  message: string;
  path?: Array<string | number>;
  extensions: { code: string; details?: Array<{ field: string; message: string; value?: unknown }> };
}

export interface GqlAnswer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
  errors: GqlError[] | undefined;
}

/**
 * Sends one operation with graphql-request (Accept: application/graphql-response+json, application/json; errors and data
 * both returned). `key`: the API key (the admin's by default; null for none).
 */
export async function gql(
  server: TestServer,
  query: string,
  variables?: Record<string, unknown>,
  options: { key?: string | null; headers?: Record<string, string>; method?: 'GET' | 'POST' } = {},
): Promise<GqlAnswer> {
  const key = options.key === undefined ? ADMIN_KEY : options.key;
  const client = new GraphQLClient(`${server.baseUrl}/graphql`, {
    errorPolicy: 'all',
    ...(options.method ? { method: options.method } : {}),
    headers: { ...(key !== null ? { 'x-api-key': key } : {}), ...(options.headers ?? {}) },
  });
  try {
    const res = await client.rawRequest(query, variables);
    return { status: res.status, headers: res.headers, data: res.data, errors: res.errors as GqlError[] | undefined };
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    const r = err.response as unknown as { status: number; headers: Headers; data?: unknown; errors?: GqlError[] };
    return { status: r.status, headers: r.headers, data: r.data, errors: r.errors };
  }
}

/** The data of an answer without errors. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function data(server: TestServer, query: string, variables?: Record<string, unknown>, options: { key?: string | null } = {}): Promise<any> {
  const res = await gql(server, query, variables, options);
  assert.equal(res.status, 200);
  assert.equal(res.errors, undefined, JSON.stringify(res.errors));
  return res.data;
}

/** The one error of an answer, with its code. */
export function onlyError(res: GqlAnswer, code: string): GqlError {
  assert.equal(res.errors?.length, 1, JSON.stringify(res.errors));
  assert.equal(res.errors![0]!.extensions.code, code, JSON.stringify(res.errors));
  return res.errors![0]!;
}

/** A REST object as GraphQL names it: its fields in camelCase, links left out. */
export function asGraphql(rest: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) if (k !== 'links') out[k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase())] = v;
  return out;
}

/** Selections of every field REST shows, per resource (GraphQL asks for fields by name). */
export const FIELDS = {
  users: 'id email fullName role createdAt updatedAt',
  products: 'id name description price { amount currency } status tags createdAt updatedAt',
  orders: 'id userId status total { amount currency } createdAt updatedAt',
  orderItems: 'id orderId productId quantity unitPrice { amount currency } createdAt updatedAt',
  reviews: 'id itemId userId rating title body createdAt updatedAt',
  apiKeys: 'id name userId scopes prefix apiVersion createdAt updatedAt',
  webhookEndpoints: 'id userId url events description apiVersion status disabledReason createdAt updatedAt',
};

/** The store's reads of objects (the event log's, which each process's stream hub polls on its own, are not the request's). */
const READS = ['get', 'getMany', 'findOne', 'list', 'listGroups', 'sum'] as const;

/**
 * Counts the statements the store runs for reads from now on: each read method's call is one statement, a list
 * with its total two (src/store/sql/queries.ts listSql). `stop()` restores the store and returns the count and what ran.
 */
export function countReads(store: Store): { stop(): { count: number; calls: string[] } } {
  const calls: string[] = [];
  const target = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of READS) {
    const original = target[name]!;
    target[name] = function (this: unknown, ...args: unknown[]) {
      const query = args[1] as { withTotal?: boolean } | undefined;
      calls.push(`${name} ${String(args[0])}`);
      if (name === 'list' && query?.withTotal) calls.push(`count ${String(args[0])}`);
      return original.apply(store, args);
    };
  }
  return {
    stop: () => {
      // The methods are the class's: the instance's own wrappers go, and the prototype's answer again.
      for (const name of READS) delete target[name];
      return { count: calls.length, calls };
    },
  };
}
