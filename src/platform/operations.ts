// The internal `operations` resource: one row per request of an asynchronous action (202), its state, and the worker's claim on it.
import { defineResource, f } from '../model/define.js';
import type { ResourceDef } from '../model/types.js';

export const OPERATIONS = 'operations';

export const OPERATION_STATUSES = ['processing', 'succeeded', 'failed'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

/**
 * Written in the request's own transaction, so an accepted request is never lost: a worker claims the row by
 * moving `next_attempt_at` forward (the lease), performs the action outside any transaction, then settles
 * it. A row still `processing` whose lease has run out belongs to a worker that died; it is claimed again.
 */
export function operationsResource(): ResourceDef {
  return defineResource({
    name: OPERATIONS,
    singular: 'operation',
    // No routes and no events: the change of the object itself writes the event (order.paid).
    internal: true,
    fields: {
      resource: f.string({ required: true, maxLength: 100 }),
      object_id: f.uuid({ required: true, filterable: true }),
      action: f.string({ required: true, maxLength: 100 }),
      // Filterable enum × sortable next_attempt_at: one (status, next_attempt_at, id) index serves the claim.
      status: f.enum(OPERATION_STATUSES, { default: 'processing', filterable: true }),
      error: f.string({ maxLength: 1000 }),
      attempts: f.integer({ default: 0, minimum: 0 }),
      /** While processing: when a worker may claim it (next); once claimed, when the claim lapses. */
      next_attempt_at: f.timestamp({ sortable: true }),
    },
    permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
  });
}
