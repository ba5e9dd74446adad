// Resolvers of relations (DESIGN §7: `order { user items { product } }`): batched per request through the loaders, under the caller's visibility.
import type { GraphQLFieldResolver } from 'graphql';
import type { CompiledResource } from '../model/compile.js';
import type { Relation } from '../model/relations.js';
import type { ListPlan } from '../query/list-params.js';
import type { Loaded } from '../services/access.js';
import { groupConnection, pageConnection, type ConnectionSource } from './connections.js';
import type { Context } from './context.js';
import { planOf, type ListArgs } from './list-args.js';

type Resolver<T> = GraphQLFieldResolver<Loaded, Context, ListArgs, Promise<T> | T>;

/** `orderItem.product`: the parent by its foreign key, null when there is none or the caller may not see it. */
export function toOne(relation: Relation): Resolver<Loaded | null> {
  return (source, _args, c) => {
    const id = source.record[relation.field];
    return typeof id === 'string' ? c.loaders.object(relation.resource).load(id) : null;
  };
}

/** The collection a relation's children form under one parent: cursors of one parent's connection are refused by another's. */
function scopeOf(parent: CompiledResource, id: string, child: CompiledResource): string {
  return `graphql:${parent.name}/${id}/${child.name}`;
}

/**
 * A plan parsed once per request for the same arguments (the twenty orders of a page ask for their items alike):
 * parsing signs nothing here, but it checks and digests every argument.
 */
function memoPlan(c: Context, child: CompiledResource, args: ListArgs, scope: string): ListPlan {
  const key = `plan\n${scope}\n${JSON.stringify(args)}`;
  let plan = c.memo.get(key) as ListPlan | undefined;
  if (!plan) c.memo.set(key, (plan = planOf(child, args, c.deps.secret, scope)));
  return plan;
}

/** The batched read of one parent's first children as `args` ask (first, filter, sort): one statement for every parent of the request. */
async function childGroup(c: Context, parent: CompiledResource, child: CompiledResource, relation: Relation, id: string, args: ListArgs) {
  const plan = memoPlan(c, child, args, `graphql:${parent.name}/*/${child.name}`);
  const key = JSON.stringify([plan.where, plan.orderBy, plan.page.limit]);
  return c.loaders.children(child.name, relation.field, key, { where: plan.where, orderBy: plan.orderBy, limit: plan.page.limit }).load(id);
}

/** `order.items(first:, filter:, sort:)`: the first children as a list. */
export function toManyList(parent: CompiledResource, child: CompiledResource, relation: Relation): Resolver<Loaded[]> {
  return async (source, args, c) => (await childGroup(c, parent, child, relation, source.record.id, args)).rows;
}

/**
 * `order.itemsConnection(first:, after:, filter:, sort:, q:)`: without `after` or `q`, the batched read (its
 * total from the same statement); with either, that parent's page alone, as REST's nested list reads it.
 */
export function toManyConnection(parent: CompiledResource, child: CompiledResource, relation: Relation): Resolver<ConnectionSource> {
  return async (source, args, c) => {
    const id = source.record.id;
    const scope = scopeOf(parent, id, child);
    if ((args.after === undefined || args.after === null) && (args.q === undefined || args.q === null)) {
      const group = await childGroup(c, parent, child, relation, id, args);
      return groupConnection(group.rows, group.total, () => planOf(child, args, c.deps.secret, scope), c.deps.secret);
    }
    const plan = planOf(child, args, c.deps.secret, scope);
    const ref = { resource: parent.name, id, field: relation.field };
    const page = await c.deps.pages.page(c.ctx, child.name, plan, ref, c.reader);
    return pageConnection(
      c.deps.pages,
      page,
      async () => (await c.deps.pages.page(c.ctx, child.name, { ...plan, page: { style: 'offset', limit: 1, offset: 0 } }, ref, c.reader)).total ?? 0,
    );
  };
}
