// The hold of the state rule (src/model/state-rule.ts) as the services apply it: set, released, and refused with the operation named.
import { AppError } from '../errors/app-error.js';
import type { CompiledModel, CompiledResource } from '../model/compile.js';
import { heldBy, HOLD_FIELD } from '../model/state-rule.js';
import { OPERATIONS } from '../platform/operations.js';
import type { StoredRecord, Tx } from '../store/types.js';

/**
 * Refuses a change of `record` while an operation holds it (409 INVALID_STATE naming the operation); `holder`,
 * the operation being settled, may change it. `record` must have been read under the object's lock, so the
 * answer holds until the transaction ends: the request that set the hold took the same lock.
 */
export async function assertNotHeld(tx: Tx, r: CompiledResource, record: StoredRecord, holder?: string): Promise<void> {
  const by = heldBy(record);
  if (by === null || by === holder) return;
  throw heldError(r, by, await tx.get(OPERATIONS, by));
}

/** The refusal: which operation holds the object, and that the object cannot change until it has finished. */
export function heldError(r: CompiledResource, operationId: string, operation: StoredRecord | null): AppError {
  const object = r.singular.replace(/_/g, ' ');
  const action = operation ? String(operation.action) : 'operation';
  return new AppError('INVALID_STATE', `The ${object}'s ${action} ${operationId} is processing; the ${object} cannot change until it has finished.`, {
    details: [{ field: action, message: `is processing; GET the ${object}'s ${action} to follow it`, value: operationId }],
  });
}

/**
 * The parents `record` is part of (BelongsTo.partOf), locked for update in the transaction, each refused
 * while held: a write of an order's item is a change of the order. Taken before the child's own lock where
 * the caller can, so every transaction locks parent before child.
 */
export async function assertPartsFree(tx: Tx, model: CompiledModel, r: CompiledResource, record: StoredRecord): Promise<void> {
  for (const rel of r.parents) {
    if (!rel.partOf) continue;
    const id = record[rel.field];
    if (typeof id !== 'string') continue;
    const parent = await tx.lock(rel.resource, id, 'update');
    if (parent) await assertNotHeld(tx, model.resources.get(rel.resource)!, parent);
  }
}

/** Locks the parents `record` is part of, without judging them yet (the caller has not decided visibility): the lock order. */
export async function lockParts(tx: Tx, r: CompiledResource, record: StoredRecord | null): Promise<void> {
  if (!record) return;
  for (const rel of r.parents) {
    const id = record[rel.field];
    if (rel.partOf && typeof id === 'string') await tx.lock(rel.resource, id, 'update');
  }
}

/** Sets or clears the hold: bookkeeping of the object, with no event, hooks or timestamp (no field clients see changes); the version moves, as the links do. */
export async function writeHold(tx: Tx, record: StoredRecord, r: CompiledResource, operationId: string | null): Promise<StoredRecord> {
  const next: StoredRecord = { ...record, [HOLD_FIELD]: operationId, version: record.version + 1 };
  await tx.update(r.name, next);
  return next;
}
