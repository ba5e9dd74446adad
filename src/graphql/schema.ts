// The schema generated from the model and the catalog (DESIGN §7): a query and a collection per resource REST serves, and the mutations REST has (create, update, delete, each action).
import { GraphQLID, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, type GraphQLFieldConfigMap } from 'graphql';
import type { Catalog } from '../catalog/catalog.js';
import { newestVersion, type CompiledModel, type CompiledResource } from '../model/compile.js';
import type { Context } from './context.js';
import { JSONValue } from './scalars.js';
import { listField, singleField, typeName } from './names.js';
import { AcceptedOperation, listArgs, ObjectTypes } from './object-types.js';
import { create, readMany, readOne, remove, replace, runAction, update } from './root-fields.js';
import { subscriptionFields } from './subscriptions.js';

const ID = { type: new GraphQLNonNull(GraphQLID) };

/** REST's If-Match as an argument: the change is made only while the object's ETag is one of these, else PRECONDITION_FAILED and nothing is written. */
const IF_MATCH = { type: GraphQLString };
const IF_MATCH_NOTE = ' `ifMatch`: as REST’s If-Match, an `etag` this caller read (several comma-separated, or `*`); a stale one is PRECONDITION_FAILED and nothing is written.';

/**
 * The schema of an app. It speaks the newest version (v2's fields, in camelCase); a resource is in it when REST
 * serves it, and each mutation exists when REST has the operation (a method granted to nobody, such as creating a
 * webhook delivery, is absent in both).
 */
export function buildSchema(model: CompiledModel, catalog: Catalog): GraphQLSchema {
  const v = newestVersion(model).name;
  const op = (r: CompiledResource, name: string) => catalog.get(`${v}.${r.name}.${name}`);
  const served = new Map([...model.resources.values()].filter((r) => !r.def.internal && op(r, 'read')).map((r) => [r.name, r]));
  // An action's GET exists where REST serves it: a view at its name, an asynchronous action's state at `{name}.status`.
  const types = new ObjectTypes(served, v, (r, action, asynchronous) => op(r, asynchronous ? `${action}.status` : action) !== undefined);
  const query: GraphQLFieldConfigMap<unknown, Context> = {};
  const mutation: GraphQLFieldConfigMap<unknown, Context> = {};
  const addMutation = (name: string, config: GraphQLFieldConfigMap<unknown, Context>[string]): void => {
    if (name in mutation) throw new Error(`two mutations are named ${name}: rename an action (ActionDef.verb)`);
    mutation[name] = config;
  };
  for (const r of served.values()) {
    const object = types.object(r);
    query[singleField(r)] = { type: object, description: op(r, 'read')!.description, args: { id: ID }, resolve: readOne(r) };
    const list = op(r, 'list');
    if (list) query[listField(r)] = { type: new GraphQLNonNull(types.connection(r)), description: list.description, args: listArgs(types.filters, r, true), resolve: readMany(r) };
    const created = op(r, 'create');
    if (created) {
      const input = types.input(r, 'create');
      addMutation(`create${typeName(r)}`, {
        type: new GraphQLNonNull(object),
        description: created.description,
        args: input ? { input: { type: new GraphQLNonNull(input) } } : {},
        resolve: create(r),
      });
    }
    const updated = op(r, 'update');
    const patch = updated ? types.input(r, 'update') : undefined;
    if (updated && patch)
      addMutation(`update${typeName(r)}`, {
        type: new GraphQLNonNull(object),
        description: updated.description + IF_MATCH_NOTE,
        args: { id: ID, input: { type: new GraphQLNonNull(patch) }, ifMatch: IF_MATCH },
        resolve: update(r, v),
      });
    const replaced = op(r, 'replace');
    const whole = replaced ? types.input(r, 'replace') : undefined;
    if (replaced && whole)
      addMutation(`replace${typeName(r)}`, {
        type: new GraphQLNonNull(object),
        description: replaced.description + IF_MATCH_NOTE,
        args: { id: ID, input: { type: new GraphQLNonNull(whole) }, ifMatch: IF_MATCH },
        resolve: replace(r, v),
      });
    const deleted = op(r, 'delete');
    if (deleted)
      addMutation(`delete${typeName(r)}`, {
        type: new GraphQLNonNull(GraphQLID),
        description: `${deleted.description} Answers with its id.${IF_MATCH_NOTE}`,
        args: { id: ID, ifMatch: IF_MATCH },
        resolve: remove(r, v),
      });
    for (const [action, name] of Object.entries(r.actionNames)) {
      const described = op(r, action);
      if (!described) continue;
      const input = types.actionInput(r, action, name);
      addMutation(name, {
        type: new GraphQLNonNull(r.def.actions![action]!.perform ? AcceptedOperation : object),
        description: described.description,
        args: { id: ID, ...(input ? { input: { type: input } } : {}) },
        resolve: runAction(r, action),
      });
    }
  }
  return new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: query }),
    ...(Object.keys(mutation).length ? { mutation: new GraphQLObjectType({ name: 'Mutation', fields: mutation }) } : {}),
    // Served over Server-Sent Events only (docs/graphql.md, Subscriptions); a subscription by plain JSON is refused.
    subscription: new GraphQLObjectType({ name: 'Subscription', fields: subscriptionFields(model, served.values()) }),
    // Declared even where no field uses it yet, so the SDL is the same for every app.
    types: [JSONValue],
  });
}
