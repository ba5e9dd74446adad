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
  // The versions it serves (DESIGN §10): v2 alone for now; v1 and its change modules come with versioning.
  versions: [{ name: 'v2', date: '2026-03-01', description: 'Money as {amount, currency}; users have full_name.' }],
  seed: seedCommerce,
});

export default commerce;
