// The /webhook-deliveries platform resource (DESIGN §9): one row per (endpoint, event), its attempts, and the dead-letter store (`failed`).
import { defineResource, f } from '../model/define.js';
import type { ResourceDef } from '../model/types.js';
import type { Reader } from '../store/types.js';
import { WEBHOOK_ENDPOINTS } from './endpoints.js';

export const WEBHOOK_DELIVERIES = 'webhook-deliveries';

/** One attempt as the delivery object lists it. */
export interface DeliveryAttempt {
  at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

/** Deliveries waiting (due now, or scheduled for a retry): the queue depth an operator watches (`canon_webhook_queue_depth`). */
export async function pendingDeliveries(reader: Pick<Reader, 'list'>): Promise<number> {
  const page = await reader.list(WEBHOOK_DELIVERIES, {
    where: [{ path: 'status', op: 'eq', value: 'pending' }],
    orderBy: [{ path: 'id', desc: false }],
    limit: 1,
    withTotal: true,
  });
  return page.total ?? 0;
}

export function webhookDeliveriesResource(): ResourceDef {
  return defineResource({
    name: WEBHOOK_DELIVERIES,
    singular: 'webhook_delivery',
    // Deliveries are about events: events about them would be delivered in turn, without end.
    events: false,
    fields: {
      endpoint_id: f.uuid({ required: true, readOnly: true, filterable: true, references: WEBHOOK_ENDPOINTS }),
      event_id: f.uuid({ required: true, readOnly: true, filterable: true }),
      event_type: f.string({ required: true, readOnly: true, filterable: true }),
      status: f.enum(['pending', 'succeeded', 'failed'], { default: 'pending', filterable: true, readOnly: true }),
      attempts: f.object({
        readOnly: true,
        description: 'Every attempt: {at, status_code, duration_ms, error}.',
        shape: {
          type: 'array',
          items: {
            type: 'object',
            required: ['at', 'status_code', 'duration_ms'],
            properties: {
              at: { type: 'string', format: 'date-time' },
              status_code: { type: ['integer', 'null'] },
              duration_ms: { type: 'integer', minimum: 0 },
              error: { type: ['string', 'null'] },
            },
          },
        },
      }),
      /** When a worker may (next) attempt it; while a worker holds it, the end of its lease (30 s). */
      next_attempt_at: f.timestamp({ readOnly: true, filterable: true, sortable: true }),
      /** Which claim holds it: a worker whose lease ran out cannot record an attempt over a newer claim. */
      claim: f.string({ hidden: true }),
    },
    belongsTo: [{ resource: WEBHOOK_ENDPOINTS, field: 'endpoint_id', nested: true, onDelete: 'cascade' }],
    // Deliveries are made by workers only; admins, and each endpoint's owner, read them and re-send failed ones.
    ownership: { field: 'endpoint_id', through: WEBHOOK_ENDPOINTS },
    permissions: { read: ['admin', 'owner'], create: [], update: [], delete: [] },
    actions: {
      retry: {
        method: 'POST',
        allow: ['admin', 'owner'],
        status: 202,
        description: 'Sends a failed delivery again (202): it becomes pending with a fresh schedule, its attempts kept.',
        when: (d) => d.status === 'failed',
        run: (_d, ctx) => ({ status: 'pending', next_attempt_at: ctx.now, claim: null }),
      },
    },
  });
}

export const WEBHOOK_DISPATCH = 'webhook-dispatch';
/**
 * The row every dispatching transaction locks first, so dispatchers take turns (one per deployment at a time);
 * its position is the dispatcher's frontier, the log's head at the last dispatch (src/webhooks/dispatch-positions.ts).
 */
export const DISPATCH_ROW = '00000000-0000-7000-8000-000000000001';

/**
 * How far events have been turned into deliveries: the frontier row (DISPATCH_ROW), and one row per endpoint,
 * under the endpoint's id, at the sequence after which its deliveries are still to be made (null while the
 * endpoint is disabled and owed nothing). Deliveries and the positions they move commit together: a worker
 * killed mid-way leaves both as they were.
 */
export function webhookDispatchResource(): ResourceDef {
  return defineResource({
    name: WEBHOOK_DISPATCH,
    singular: 'webhook_dispatch',
    internal: true,
    fields: { position: f.integer() },
    permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
  });
}
