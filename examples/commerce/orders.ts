// Reference domain: orders. A customer sees and creates its own; admins move them along; cancel and tracking actions.
import { createHash } from 'node:crypto';
import { defineResource, f, type StoredRecord } from '../../src/index.js';

const CANCELLABLE = ['pending', 'paid'];
const SHIPPED = ['shipped', 'delivered'];

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
