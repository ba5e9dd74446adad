// The bookkeeping writes of an operation row, shared by the request that queues it, the runner that claims it and the transaction that settles it.
import { OPERATIONS } from '../platform/operations.js';
import type { StoredRecord, Tx } from '../store/types.js';

/** Writes an operation's bookkeeping directly: an internal row, with no hooks, transitions or events to run. */
export async function bumpOperation(tx: Tx, row: StoredRecord, changes: Record<string, unknown>, now: string): Promise<StoredRecord> {
  const next: StoredRecord = { ...row, ...changes, version: row.version + 1, updated_at: now };
  await tx.update(OPERATIONS, next);
  return next;
}
