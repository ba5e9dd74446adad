// The few generic calls every method is made of: read, write, remove, list, accept (a 202), and the builder that turns the operations table into a collection's methods.
import { operationOf, type Operation } from './operation.js';
import type { CollectionSpec, Verb } from './operations.js';
import { firstPageQuery, Listing, queryString, type PagingOptions, type QueryValue } from './paging.js';
import { bodyOf } from './response-info.js';
import type { Method, Transport } from './transport.js';

export interface Options {
  signal?: AbortSignal;
  headers?: Record<string, string>;
  ifNoneMatch?: string;
  ifMatch?: string;
  idempotencyKey?: string;
}

type Fn = (...args: never[]) => unknown;
export type Methods = Record<string, Fn | Record<string, Fn> | ((id: string) => Record<string, Fn>)>;

/** One path segment: ids go into paths encoded, and an empty or non-string id is refused before any request. */
export function segment(id: string): string {
  if (typeof id !== 'string' || id === '') throw new TypeError(`an id must be a non-empty string, not ${JSON.stringify(id)}`);
  return encodeURIComponent(id);
}

/** GET: the body; undefined for a 304 the ETag cache could not answer (the caller's copy is current). */
export async function read(t: Transport, url: string, options: Options = {}): Promise<unknown> {
  const reply = await t.send({ method: 'GET', url, signal: options.signal, ...pick(options, 'headers', 'ifNoneMatch') });
  return bodyOf(reply);
}

/** POST, PUT, PATCH: the body the server answered. PATCH is a merge patch (RFC 7396, DESIGN §4). */
export async function write(t: Transport, method: Method, url: string, json: unknown, options: Options = {}): Promise<unknown> {
  const reply = await t.send({
    method,
    url,
    json,
    signal: options.signal,
    ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}),
    ...pick(options, 'headers', 'ifMatch', 'idempotencyKey'),
  });
  return bodyOf(reply);
}

/** DELETE (or a PUT answering 204): resolves with nothing. */
export async function remove(t: Transport, method: Method, url: string, json: unknown, options: Options = {}): Promise<void> {
  await t.send({ method, url, signal: options.signal, ...(json !== undefined ? { json } : {}), ...pick(options, 'headers', 'ifMatch') });
}

/** A POST answered 202 (DESIGN §9): the operation handle. */
export async function accept(t: Transport, url: string, options: Options = {}): Promise<Operation<unknown, unknown>> {
  const reply = await t.send({ method: 'POST', url, signal: options.signal, ...pick(options, 'headers', 'idempotencyKey') });
  return operationOf(t, reply);
}

/** A collection's items across pages; nothing is requested until it is iterated. */
export function list(t: Transport, url: string, params: Record<string, QueryValue> & PagingOptions = {}): Listing<unknown, unknown> {
  return new Listing((next) => read(t, next), url + queryString(firstPageQuery({ ...params })));
}

/** The methods of one collection at `base` (`/v2/orders`, or a nested `/v2/users/{id}/orders`). */
export function collection(t: Transport, base: string, verbs: readonly Verb[]): Record<string, Fn> {
  const at = (id: string): string => `${base}/${segment(id)}`;
  const all: Record<Verb, Fn> = {
    list: (params?: Record<string, QueryValue>) => list(t, base, params),
    get: (id: string, options?: Options) => read(t, at(id), options),
    create: (body: unknown, options?: Options) => write(t, 'POST', base, body, options),
    update: (id: string, patch: unknown, options?: Options) => write(t, 'PATCH', at(id), patch, options),
    replace: (id: string, body: unknown, options?: Options) => write(t, 'PUT', at(id), body, options),
    delete: (id: string, options?: Options) => remove(t, 'DELETE', at(id), undefined, options),
  };
  return Object.fromEntries(verbs.map((verb) => [verb, all[verb]]));
}

/** A collection from the table: its verbs, nested collections, actions, 202 actions and sub-resource reads. */
export function fromSpec(t: Transport, prefix: string, spec: CollectionSpec): Methods {
  const base = `${prefix}/${spec.path}`;
  const sub = (id: string, name: string): string => `${base}/${segment(id)}/${name}`;
  const methods: Methods = collection(t, base, spec.verbs);
  for (const [name, nested] of Object.entries(spec.nested ?? {})) methods[name] = (id: string) => collection(t, sub(id, nested.path), nested.verbs);
  for (const [name, path] of Object.entries(spec.actions ?? {})) methods[name] = (id: string, options?: Options) => write(t, 'POST', sub(id, path), undefined, options);
  for (const [name, path] of Object.entries(spec.accepted ?? {})) methods[name] = (id: string, options?: Options) => accept(t, sub(id, path), options);
  for (const [name, path] of Object.entries(spec.reads ?? {})) methods[name] = (id: string, options?: Options) => read(t, sub(id, path), options);
  return methods;
}

/** The options that are set, and only those (absent ones must not reach the request as `undefined` headers). */
function pick<K extends keyof Options>(options: Options, ...names: K[]): Pick<Options, K> {
  const out: Partial<Options> = {};
  for (const name of names) if (options[name] !== undefined) out[name] = options[name];
  return out as Pick<Options, K>;
}
