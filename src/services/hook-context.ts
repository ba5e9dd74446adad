// What a resource's hooks get inside a change's transaction (HookContext): reads, locks and sums through it, and updates through the service's own update path.
import type { CompiledModel, CompiledResource } from '../model/compile.js';
import { resourceOf } from '../model/compile.js';
import { eventTypeTable } from '../model/event-types.js';
import type { HookContext, HookServices, PrepareContext } from '../model/types.js';
import type { Condition, StoredRecord, Tx } from '../store/types.js';
import { notFound } from './resource-errors.js';

/** The most rows a hook's `list` reads: hooks look at one object's parts, never a whole table. */
export const HOOK_LIST_LIMIT = 10_000;

/** The update path a hook's `update` goes through (ResourceService.applyUpdate): state rule, transitions, hooks, event. */
export type HookUpdate = (target: CompiledResource, current: StoredRecord, changes: Record<string, unknown>, eventType?: string) => Promise<StoredRecord>;

/** The hooks' context for one transaction: `base` (who and when) with services bound to `tx`. */
export function hookContext(model: CompiledModel, tx: Tx, base: PrepareContext, update: HookUpdate): HookContext {
  const services: HookServices = {
    get: (resource, id) => tx.get(resource, id),
    list: async (resource, where) => (await tx.list(resource, { where: equalities(where), orderBy: [{ path: 'id', desc: false }], limit: HOOK_LIST_LIMIT })).rows,
    lock: (resource, id) => tx.lock(resource, id, 'update'),
    sum: (resource, where, factors) => tx.sum(resource, equalities(where), factors),
    update: async (resource, id, changes, eventType) => {
      const target = resourceOf(model, resource);
      if (eventType !== undefined && eventTypeTable(model).get(eventType)?.resource !== target.name) {
        throw new Error(
          `a hook wrote ${resource} under the event type ${eventType}, which ${resource} does not declare (ResourceDef.eventTypes): the event catalog lists every type an app emits`,
        );
      }
      const current = await tx.lock(resource, id, 'update');
      if (!current) throw notFound(target);
      return update(target, current, changes, eventType);
    },
  };
  return { ...base, services, cascading: false, reveal: {} };
}

/** A hook's `{ field: value }` as the store's conditions. */
function equalities(where: Record<string, unknown>): Condition[] {
  return Object.entries(where).map(([path, value]) => ({ path, op: 'eq', value }));
}
