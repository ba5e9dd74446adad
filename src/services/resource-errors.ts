// The resource service's refusals in the contract's error shape (DESIGN §8): not found, invalid, precondition failed, and a unique key taken.
import { AppError, type ErrorDetail } from '../errors/app-error.js';
import type { CompiledResource } from '../model/compile.js';
import { UniqueViolation, type StoredRecord, type Tx } from '../store/types.js';
import { publicView } from './views.js';

/** How messages name one object of a resource (`order item`). */
export function label(r: CompiledResource): string {
  return r.singular.replace(/_/g, ' ');
}

/** 404: also what an object the principal may not see gets, so existence never leaks. */
export function notFound(r: CompiledResource): AppError {
  return new AppError('NOT_FOUND', `No such ${label(r)}.`);
}

/** A 422 worded as the body validator words it (src/model/validate.ts), whichever check found the problem. */
export function validation(r: CompiledResource, details: ErrorDetail[]): AppError {
  return new AppError('VALIDATION_ERROR', `The ${label(r)} is invalid.`, { details });
}

/** 412 (RFC 9110 §13.1.1): If-Match named another version of the object. */
export function preconditionFailed(): AppError {
  return new AppError('PRECONDITION_FAILED', 'If-Match does not match the current ETag; fetch the object again and retry.');
}

/** Inserts a record; a unique key already taken is a 409 naming the field. */
export async function insertOrConflict(tx: Tx, r: CompiledResource, record: StoredRecord): Promise<void> {
  try {
    await tx.insert(r.name, record);
  } catch (err) {
    throw conflictFrom(err, r, record);
  }
}

/** Updates a record; a unique key already taken is a 409 naming the field. */
export async function updateOrConflict(tx: Tx, r: CompiledResource, record: StoredRecord): Promise<void> {
  try {
    await tx.update(r.name, record);
  } catch (err) {
    throw conflictFrom(err, r, record);
  }
}

/** The store's unique violation as a 409 that shows the value only where the caller's view of the object does. */
function conflictFrom(err: unknown, r: CompiledResource, record: StoredRecord): unknown {
  if (!(err instanceof UniqueViolation)) return err;
  const view = publicView(r, record);
  return new AppError('CONFLICT', `A ${label(r)} with this ${err.field.replace(/_/g, ' ')} already exists.`, {
    details: [{ field: err.field, message: 'is already taken', ...(err.field in view ? { value: view[err.field] } : {}) }],
  });
}
