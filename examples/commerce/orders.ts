// Reference domain: orders. A customer sees and creates its own; admins move them along; cancel, payment (asynchronous) and tracking actions.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, defineResource, f, type StoredRecord } from '../../src/index.js';

const CANCELLABLE = ['pending', 'paid'];
const SHIPPED = ['shipped', 'delivered'];

/** A number from the environment, read at each use (tests change it), or `fallback` when unset or not a number in [min, max]. */
function envNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw.trim() === '' ? NaN : Number(raw);
  return Number.isFinite(value) && value >= min && value <= max ? value : fallback;
}

/**
 * A stand-in for a payment provider: it answers after CANON_PAYMENT_DELAY_MS (default 100) and declines with
 * probability CANON_PAYMENT_FAILURE_RATE (0..1, default 0). A real one is called with `idempotencyKey`, so a
 * payment attempted again after a worker died is not charged twice, and with `signal`, so a call past the
 * worker's bound (CANON_OPERATION_TIMEOUT_MS) stops.
 */
async function simulatedPayment(signal: AbortSignal): Promise<Record<string, unknown>> {
  await sleep(envNumber('CANON_PAYMENT_DELAY_MS', 100, 0, 60_000), undefined, { signal });
  if (Math.random() < envNumber('CANON_PAYMENT_FAILURE_RATE', 0, 0, 1)) throw new Error('The card was declined.');
  // The order's stateEvents turn this change into the order.paid event.
  return { status: 'paid' };
}

function trackingNumber(id: string): string {
  return `CN${createHash('sha256').update(id).digest('hex').slice(0, 12).toUpperCase()}`;
}

export const orders = defineResource({
  name: 'orders',
  singular: 'order',
  fields: {
    user_id: f.uuid({ createOnly: true, filterable: true, references: 'users' }),
    status: f.enum(['pending', 'paid', 'shipped', 'delivered', 'cancelled'], { default: 'pending', filterable: true, writableBy: ['admin'] }),
    // The order's currency, given at creation; the total starts at zero in it.
    currency: f.string({ virtual: true, createOnly: true, pattern: '^[A-Z]{3}$', default: 'EUR' }),
    total: f.money({ readOnly: true, filterable: true, sortable: true }),
    shipped_at: f.timestamp({ hidden: true }),
    delivered_at: f.timestamp({ hidden: true }),
  },
  belongsTo: [{ resource: 'users', field: 'user_id', nested: true, onDelete: 'restrict' }],
  ownership: { field: 'user_id' },
  permissions: { read: ['admin', 'owner'], create: ['admin', 'owner'], update: ['admin'], delete: ['admin'] },
  transitions: {
    status: { pending: ['paid', 'cancelled'], paid: ['shipped', 'cancelled'], shipped: ['delivered'], delivered: [], cancelled: [] },
  },
  stateEvents: { status: { paid: 'order.paid', shipped: 'order.shipped', delivered: 'order.delivered', cancelled: 'order.cancelled' } },
  actions: {
    cancel: {
      method: 'POST',
      allow: ['admin', 'owner'],
      when: (o: StoredRecord) => CANCELLABLE.includes(o.status as string),
      run: () => ({ status: 'cancelled' }),
    },
    // DESIGN §3: 202 with the outcome at the Location; the order becomes paid once a worker has performed it.
    // Until then the payment holds the order (the state rule, DESIGN §9): no cancel, no change, no second payment.
    payment: {
      method: 'POST',
      // Named by its verb where operations are verbs (GraphQL's payOrder).
      verb: 'pay',
      status: 202,
      allow: ['admin', 'owner'],
      when: (o: StoredRecord) => o.status === 'pending',
      async run(o, ctx) {
        // Under the order's lock (runAction holds it), so items cannot be removed between this check and the commit.
        const items = await ctx.services.sum('order-items', { order_id: o.id }, ['quantity']);
        if (items === 0) throw new AppError('INVALID_STATE', 'An order without items cannot be paid.');
        return {};
      },
      perform: (_order, ctx) => simulatedPayment(ctx.signal),
    },
    tracking: {
      method: 'GET',
      allow: ['admin', 'owner'],
      when: (o: StoredRecord) => SHIPPED.includes(o.status as string),
      view: (o: StoredRecord) => ({
        order_id: o.id,
        status: o.status === 'delivered' ? 'delivered' : 'in_transit',
        carrier: 'Canon Post',
        tracking_number: trackingNumber(o.id),
        shipped_at: o.shipped_at ?? null,
        delivered_at: o.delivered_at ?? null,
      }),
    },
  },
  hooks: {
    beforeCreate(values) {
      const { currency, ...rest } = values;
      return { ...rest, total: { amount: 0, currency: currency ?? 'EUR' } };
    },
    beforeUpdate(values, current, ctx) {
      const out = { ...values };
      if (values.status === 'shipped' && current.status !== 'shipped') out.shipped_at = ctx.now;
      if (values.status === 'delivered' && current.status !== 'delivered') out.delivered_at = ctx.now;
      return out;
    },
  },
});
