// The GET actions of an object as its fields (DESIGN §7, issue 29): a view (`order.tracking`) and the state of an asynchronous action (`order.payment`), read through the services REST's GET routes call.
import { GraphQLEnumType, GraphQLNonNull, GraphQLObjectType, GraphQLString, type GraphQLFieldConfig } from 'graphql';
import { isAppError } from '../errors/app-error.js';
import type { CompiledResource } from '../model/compile.js';
import type { StoredRecord } from '../store/types.js';
import type { Context } from './context.js';
import { fieldName } from './names.js';
import type { ObjectSource } from './object-source.js';
import { DateTime, JSONValue } from './scalars.js';

export const OperationStatus = new GraphQLEnumType({
  name: 'OperationStatus',
  values: { processing: { value: 'processing' }, succeeded: { value: 'succeeded' }, failed: { value: 'failed' } },
});

/** REST's `GET /{resource}/{id}/{action}` of an asynchronous action, without its links. */
export const ActionOperation = new GraphQLObjectType<StoredRecord, Context>({
  name: 'ActionOperation',
  description: 'The newest run of an asynchronous action on an object (REST: GET /{resource}/{id}/{action}).',
  fields: {
    status: { type: new GraphQLNonNull(OperationStatus), resolve: (o) => o.status },
    error: { type: GraphQLString, description: 'Why it failed; null unless failed.', resolve: (o) => (o.status === 'failed' ? (o.error ?? 'The operation failed.') : null) },
    createdAt: { type: new GraphQLNonNull(DateTime), resolve: (o) => o.created_at },
    updatedAt: { type: new GraphQLNonNull(DateTime), resolve: (o) => o.updated_at },
  },
});

/**
 * A GET action's answer is null where REST's is 404 for the object's state (no tracking before shipping, no
 * payment before the first): a field of an object the caller sees, so the 404 says nothing it may not know.
 * Other refusals (a role the action does not allow) stay errors, as REST's 403.
 */
async function absentAsNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (err) {
    if (isAppError(err) && err.code === 'NOT_FOUND') return null;
    throw err;
  }
}

/** A view's keys in the schema's names (`tracking_number` → `trackingNumber`), as every other field. */
function camelKeys(view: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(view)) out[fieldName(key)] = value;
  return out;
}

/** `has(action, asynchronous)`: whether REST serves the GET of that action (the catalog's operation). */
export function actionFields(r: CompiledResource, has: (action: string, asynchronous: boolean) => boolean): Record<string, GraphQLFieldConfig<ObjectSource, Context>> {
  const fields: Record<string, GraphQLFieldConfig<ObjectSource, Context>> = {};
  for (const [action, def] of Object.entries(r.def.actions ?? {})) {
    const name = fieldName(action);
    if (def.method === 'GET' && def.view && has(action, false)) {
      fields[name] = {
        type: JSONValue,
        description: `${def.description ?? `The ${action} of this ${r.singular.replace(/_/g, ' ')}`}: REST's GET …/${action} without its links, keys in camelCase; null outside the states it exists in.`,
        resolve: (s, _args, c) => absentAsNull(async () => camelKeys(await c.deps.services.viewAction(c.ctx, r.name, s.record.id, action))),
      };
    } else if (def.method === 'POST' && def.perform && has(action, true)) {
      fields[name] = {
        type: ActionOperation,
        description: `The newest ${action} of this ${r.singular.replace(/_/g, ' ')}: processing, succeeded or failed; null before the first.`,
        resolve: (s, _args, c) => absentAsNull(() => c.deps.services.operationOf(c.ctx, r.name, s.record.id, action)),
      };
    }
  }
  return fields;
}
