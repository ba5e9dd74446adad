// An operation row's writes and reads outside the runner's loop: queued by the request's transaction, its bookkeeping bumped by the runner that claims it and the transaction that settles it, and the newest one read back.
import { v7 as uuidv7 } from 'uuid';
import type { CompiledModel, CompiledResource } from '../model/compile.js';
import { resourceOf } from '../model/compile.js';
import { OPERATIONS } from '../platform/operations.js';
import type { Condition, Reader, StoredRecord, Tx } from '../store/types.js';
import { heldError } from './holds.js';
import { RecordingTx } from './recording-tx.js';

/** Writes an operation's bookkeeping directly: an internal row, with no hooks, transitions or events to run. */
export async function bumpOperation(tx: Tx, row: StoredRecord, changes: Record<string, unknown>, now: string): Promise<StoredRecord> {
  const next: StoredRecord = { ...row, ...changes, version: row.version + 1, updated_at: now };
  await tx.update(OPERATIONS, next);
  return next;
}

/**
 * The operation row of an asynchronous action, due at once. The object's hold (checked by the caller under
 * its lock) keeps it to one at a time; the operations in flight are looked at too, for those queued before
 * objects carried their hold (two payments of one order would be two charges).
 */
export async function queueOperation(tx: Tx, model: CompiledModel, r: CompiledResource, objectId: string, actionName: string, now: string): Promise<StoredRecord> {
  const ops = resourceOf(model, OPERATIONS);
  const inFlight = await tx.list(OPERATIONS, {
    where: [...operationsOf(r.name, objectId, actionName), { path: 'status', op: 'eq', value: 'processing' }],
    orderBy: [{ path: 'id', desc: false }],
    limit: 1,
  });
  if (inFlight.rows[0]) throw heldError(r, inFlight.rows[0].id, inFlight.rows[0]);
  const values: Record<string, unknown> = { resource: r.name, object_id: objectId, action: actionName, status: 'processing', attempts: 0, next_attempt_at: now };
  const record: StoredRecord = { id: uuidv7(), version: 1, created_at: now, updated_at: now };
  for (const [field] of ops.stored) record[field] = values[field] ?? null;
  await tx.insert(OPERATIONS, record);
  // The worker is told once the transaction that queued it commits (ResourceService's transaction).
  if (tx instanceof RecordingTx) tx.queued = true;
  return record;
}

/** The newest operation of one action on one object, or undefined when it has none. */
export async function newestOperation(reader: Reader, r: CompiledResource, objectId: string, actionName: string): Promise<StoredRecord | undefined> {
  // Ids are UUIDv7, so the highest id is the newest operation.
  const { rows } = await reader.list(OPERATIONS, { where: operationsOf(r.name, objectId, actionName), orderBy: [{ path: 'id', desc: true }], limit: 1 });
  return rows[0];
}

/** The conditions naming the operations of one action on one object. */
function operationsOf(resource: string, objectId: string, action: string): Condition[] {
  return [
    { path: 'object_id', op: 'eq', value: objectId },
    { path: 'resource', op: 'eq', value: resource },
    { path: 'action', op: 'eq', value: action },
  ];
}
