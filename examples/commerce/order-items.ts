// Reference domain: order items. The unit price is copied from the product; every change recomputes the order total.
import { AppError, defineResource, f, MAX_AMOUNT, type HookContext, type StoredRecord } from '../../src/index.js';

type Money = { amount: number; currency: string };

/**
 * The item's order, held until the transaction ends (the services locked it already: items are part of their
 * order), so concurrent item changes recompute the total one at a time.
 */
async function orderOf(orderId: string, ctx: HookContext): Promise<StoredRecord> {
  const order = await ctx.services.lock('orders', orderId);
  if (!order) throw new AppError('NOT_FOUND', 'No such order.');
  return order;
}

/**
 * Items can change only while their order is pending: a paid order's total is what was paid. While a payment
 * of it is processing the services refuse the change before this runs (items are `partOf` their order, and the
 * payment holds the order: the state rule), so a payment accepted for one total completes for that total.
 */
function assertPending(order: StoredRecord): void {
  if (order.status !== 'pending') {
    throw new AppError('INVALID_STATE', `Items can only change while the order is pending; it is ${String(order.status)}.`);
  }
}

/** SUM over every item in SQL (integers, however many items), under the order's lock taken by orderOf. */
async function recomputeTotal(orderId: string, ctx: HookContext): Promise<void> {
  const order = await ctx.services.lock('orders', orderId);
  if (!order) return;
  const amount = await ctx.services.sum('order-items', { order_id: orderId }, ['quantity', 'unit_price.amount']);
  if (amount > MAX_AMOUNT) {
    throw new AppError('VALIDATION_ERROR', `The order total would exceed ${MAX_AMOUNT}, the largest amount there is.`, {
      details: [{ field: 'quantity', message: `would make the order total exceed ${MAX_AMOUNT}` }],
    });
  }
  await ctx.services.update('orders', orderId, { total: { amount, currency: (order.total as Money).currency } });
}

export const orderItems = defineResource({
  name: 'order-items',
  singular: 'order_item',
  fields: {
    order_id: f.uuid({ required: true, createOnly: true, filterable: true, references: 'orders' }),
    product_id: f.uuid({ required: true, createOnly: true, filterable: true, references: 'products' }),
    quantity: f.integer({ required: true, minimum: 1, maximum: 1000 }),
    unit_price: f.money({ readOnly: true }),
  },
  belongsTo: [
    // Part of the order: an item's change is the order's, refused while its payment is processing.
    { resource: 'orders', field: 'order_id', nested: true, onDelete: 'cascade', partOf: true },
    { resource: 'products', field: 'product_id', onDelete: 'restrict' },
  ],
  ownership: { field: 'order_id', through: 'orders' },
  permissions: { read: ['admin', 'owner'], create: ['admin', 'owner'], update: ['admin', 'owner'], delete: ['admin', 'owner'] },
  hooks: {
    async beforeCreate(values, ctx) {
      const order = await orderOf(String(values.order_id), ctx);
      assertPending(order);
      const product = await ctx.services.get('products', String(values.product_id));
      if (!product || product.status !== 'active') {
        throw new AppError('VALIDATION_ERROR', 'The product cannot be ordered.', {
          details: [{ field: 'product_id', message: 'is not an active product', value: values.product_id }],
        });
      }
      const price = product.price as Money;
      if (price.currency !== (order.total as Money).currency) {
        throw new AppError('VALIDATION_ERROR', 'The product is priced in another currency than the order.', {
          details: [{ field: 'product_id', message: `is priced in ${price.currency}, the order is in ${(order.total as Money).currency}`, value: values.product_id }],
        });
      }
      return { ...values, unit_price: { ...price } };
    },
    async beforeUpdate(values, current, ctx) {
      assertPending(await orderOf(String(current.order_id), ctx));
      return values;
    },
    async beforeDelete(current, ctx) {
      if (!ctx.cascading) assertPending(await orderOf(String(current.order_id), ctx));
    },
    async afterWrite(item, _kind, ctx) {
      // While the order itself is being deleted its total no longer matters.
      if (!ctx.cascading) await recomputeTotal(String(item.order_id), ctx);
    },
  },
});
