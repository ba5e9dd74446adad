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
  seed: seedCommerce,
});

export default commerce;
