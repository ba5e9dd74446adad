// The resolvers of the root fields: `product(id:)`, `products(…)`, and the mutations `createX`, `updateX`, `deleteX` and each action, all through the services REST calls.
import type { GraphQLFieldResolver } from 'graphql';
import { AppError } from '../errors/app-error.js';
import { UUID_PATTERN } from '../lib/uuid.js';
import type { CompiledResource } from '../model/compile.js';
import type { FieldDef } from '../model/types.js';
import { ifMatchPrecondition } from '../services/etags.js';
import { notFound } from '../services/resource-errors.js';
import type { ActionResult, Precondition, Within } from '../services/resource-service.js';
import { pageConnection, type ConnectionSource } from './connections.js';
import type { Context } from './context.js';
import { planOf, type ListArgs } from './list-args.js';
import { fieldName } from './names.js';
import type { ObjectSource } from './object-source.js';

type Args = Record<string, unknown>;
type Root = GraphQLFieldResolver<unknown, Context, Args, Promise<unknown>>;

/** An id argument as REST takes a path id: a UUID in either case (400 otherwise), stored lowercase. */
function idOf(args: Args): string {
  const id = String(args.id);
  if (!UUID_PATTERN.test(id)) throw new AppError('BAD_REQUEST', 'The id is not a UUID.', { details: [{ field: 'id', message: 'must be a UUID', value: id }] });
  return id.toLowerCase();
}

/** An input object in the model's names: `fullName` → `full_name`; values as they are (money parts and JSON share their names). */
function inModelNames(fields: Record<string, FieldDef>, input: unknown): Record<string, unknown> {
  const byName = new Map(Object.keys(fields).map((name) => [fieldName(name), name]));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries((input ?? {}) as Record<string, unknown>)) out[byName.get(key) ?? key] = value;
  return out;
}

/** `product(id:)`: a GET by id; another's object, or none, is NOT_FOUND (existence never leaks). */
export function readOne(r: CompiledResource): Root {
  return async (_root, args, c) => {
    const found = await c.loaders.object(r.name).load(idOf(args));
    if (!found) throw notFound(r);
    return found;
  };
}

/** `products(first:, after:, filter:, sort:, q:)`: a cursor page of what the caller may see, as REST's list reads it. */
export function readMany(r: CompiledResource): GraphQLFieldResolver<unknown, Context, ListArgs, Promise<ConnectionSource>> {
  return async (_root, args, c) => {
    const plan = planOf(r, args, c.deps.secret, `graphql:${r.name}`);
    const page = await c.deps.pages.page(c.ctx, r.name, plan, undefined, c.reader);
    return pageConnection(
      c.deps.pages,
      page,
      async () => (await c.deps.pages.page(c.ctx, r.name, { ...plan, page: { style: 'offset', limit: 1, offset: 0 } }, undefined, c.reader)).total ?? 0,
    );
  };
}

/** Runs a change: in the request's keyed batch when it carries an Idempotency-Key (src/graphql/keyed.ts), else in its own transaction. */
function change<T>(c: Context, run: (within?: Within<T>) => Promise<T>): Promise<T | null> {
  return c.batch ? c.batch.change(run) : run();
}

export function create(r: CompiledResource): Root {
  return (_root, args, c) => change(c, (within) => c.deps.services.create(c.ctx, r.name, inModelNames(r.fields, args.input), undefined, within));
}

/** The `ifMatch` argument as REST's If-Match (src/services/etags.ts): checked in the change's transaction, against the object as the caller sees it. */
function preconditionOf(args: Args, version: string): Precondition | undefined {
  return typeof args.ifMatch === 'string' ? ifMatchPrecondition(args.ifMatch, version) : undefined;
}

/** A JSON Merge Patch (RFC 7396) of the fields given: left out stays, null removes, as REST's PATCH. */
export function update(r: CompiledResource, version: string): Root {
  return (_root, args, c) =>
    change(c, (within) => c.deps.services.update(c.ctx, r.name, idOf(args), 'patch', inModelNames(r.fields, args.input), preconditionOf(args, version), within));
}

/** A whole replacement, as REST's PUT: fields left out take their defaults or are removed. */
export function replace(r: CompiledResource, version: string): Root {
  return (_root, args, c) =>
    change(c, (within) => c.deps.services.update(c.ctx, r.name, idOf(args), 'replace', inModelNames(r.fields, args.input), preconditionOf(args, version), within));
}

/** Answers with the deleted object's id. */
export function remove(r: CompiledResource, version: string): Root {
  return (_root, args, c) =>
    change<string>(c, async (within) => {
      const id = idOf(args);
      await c.deps.services.remove(c.ctx, r.name, id, preconditionOf(args, version), within);
      return id;
    });
}

/** `cancelOrder(id:)` answers with the object; an asynchronous action (`payOrder`) with REST's 202 body, `{status: processing}`. */
export function runAction(r: CompiledResource, action: string): Root {
  const input = r.def.actions?.[action]?.input ?? {};
  return async (_root, args, c) => {
    const result = await change<ActionResult>(c, (within) => c.deps.services.runAction(c.ctx, r.name, idOf(args), action, within, inModelNames(input, args.input)));
    if (result === null) return null;
    return result.operation ? { status: 'processing' } : (result satisfies ObjectSource);
  };
}
