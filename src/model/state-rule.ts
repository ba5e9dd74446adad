// The state rule (DESIGN §9 last bullet): which actions an object's state allows, and the hold an operation in flight puts on the object.
import type { ActionDef, ResourceDef } from './types.js';
import type { StoredRecord } from './records.js';

/**
 * The hidden column, on every resource with an asynchronous action, naming the operation that holds the object:
 * set in the transaction that accepts the request (the 202), cleared in the one that settles the operation.
 * It lives on the object itself, so the rule is decided under the object's own row lock, in every process,
 * by whatever reads the object (a write, the links of a GET). Field names start with a letter
 * (src/model/define.ts), so no field of an app can take this name.
 */
export const HOLD_FIELD = '_held_by';

/** Whether objects of `def` can be held: it declares an asynchronous action (one with `perform`). */
export function holdable(def: ResourceDef): boolean {
  return Object.values(def.actions ?? {}).some((a) => a.perform !== undefined);
}

/** The id of the operation in flight on `record`, or null when none holds it. */
export function heldBy(record: StoredRecord): string | null {
  const value = record[HOLD_FIELD];
  return typeof value === 'string' ? value : null;
}

/**
 * Whether the action exists for `record` now: its declared states (`when`), and for a POST action no operation
 * in flight on the object (an order whose payment is processing can be neither cancelled nor paid again). GET
 * actions only read, and stay available.
 */
export function actionAvailable(action: ActionDef, record: StoredRecord): boolean {
  if (action.method === 'POST' && heldBy(record) !== null) return false;
  return !action.when || action.when(record);
}
