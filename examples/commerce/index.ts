// The reference domain of DESIGN §3: users, products, orders, order items and reviews.
import { defineApp } from '../../src/index.js';
import { orderItems } from './order-items.js';
import { orders } from './orders.js';
import { products } from './products.js';
import { reviews } from './reviews.js';
import { seedCommerce } from './seed.js';
import { users } from './users.js';

export const commerce = defineApp({
  resources: [users, products, orders, orderItems, reviews],
  users: 'users',
  // The versions it serves (DESIGN §10): v1, deprecated, and v2; the core speaks v2, v1 is v2 walked back.
  versions: [
    {
      name: 'v1',
      date: '2025-01-15',
      description: 'Money as integer cents beside a currency; users have name.',
      deprecation: { date: '2026-03-01', sunset: '2027-03-01', guide: '/docs/migrations/v1-to-v2' },
      changes: [
        { description: 'A user’s `name` is now `full_name`.', resource: 'users', fields: [{ rename: { from: 'name', to: 'full_name' } }] },
        {
          description: 'A product’s `price_cents` and `currency` are now one `price` object, `{amount, currency}`.',
          resource: 'products',
          fields: [{ nest: { into: 'price', parts: { amount: 'price_cents', currency: 'currency' } } }],
        },
        {
          description: 'An order’s `total_cents` and `currency` are now one `total` object, `{amount, currency}`; `currency` is still given at creation.',
          resource: 'orders',
          fields: [{ nest: { into: 'total', parts: { amount: 'total_cents', currency: 'currency' }, readOnly: true } }],
        },
      ],
    },
    { name: 'v2', date: '2026-03-01', description: 'Money as {amount, currency}; users have full_name.' },
  ],
  seed: seedCommerce,
});

export default commerce;
