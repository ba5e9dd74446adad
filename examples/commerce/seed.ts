// Demo data for the reference domain, created through the services on first start in development.
import type { Seeder } from '../../src/index.js';

const PRODUCTS = [
  { name: 'Espresso beans', description: 'Dark roast whole beans from Minas Gerais, 1 kg bag.', price: { amount: 2490, currency: 'EUR' }, tags: ['coffee', 'beans'] },
  {
    name: 'Pour-over kettle',
    description: 'Gooseneck kettle with a thermometer, stainless steel, 1 litre.',
    price: { amount: 5900, currency: 'EUR' },
    tags: ['coffee', 'brewing'],
  },
  { name: 'Ceramic mug', description: 'Hand-glazed stoneware mug, 350 ml.', price: { amount: 1800, currency: 'EUR' }, tags: ['kitchen'] },
  {
    name: 'Burr grinder',
    description: 'Conical burr grinder with 40 grind settings for espresso to French press.',
    price: { amount: 14900, currency: 'EUR' },
    tags: ['coffee', 'grinder'],
  },
  { name: 'Green tea sampler', description: 'Sencha, gyokuro and matcha, three 50 g tins.', price: { amount: 3200, currency: 'EUR' }, tags: ['tea'] },
  { name: 'Milk frother', description: 'Handheld frother for lattes and cappuccinos.', price: { amount: 1500, currency: 'EUR' }, tags: ['coffee'] },
  { name: 'Cold brew jar', description: 'Glass jar with a steel filter for cold brew coffee, 1.5 litres.', price: { amount: 2700, currency: 'EUR' }, tags: ['coffee', 'brewing'] },
  { name: 'Travel tumbler', description: 'Vacuum-insulated tumbler that keeps drinks hot for six hours.', price: { amount: 2900, currency: 'EUR' }, tags: ['travel'] },
  { name: 'Paper filters', description: 'Unbleached paper filters, pack of 100.', price: { amount: 600, currency: 'EUR' }, tags: ['coffee', 'brewing'] },
  { name: 'Retired siphon brewer', description: 'Vacuum siphon brewer, no longer sold.', price: { amount: 8900, currency: 'EUR' }, status: 'archived', tags: ['coffee'] },
];

export async function seedCommerce(seed: Seeder): Promise<void> {
  await seed.create('users', { email: 'ada@example.com', full_name: 'Ada Admin', password: 'correct horse battery', role: 'admin' });
  const bob = await seed.create('users', { email: 'bob@example.com', full_name: 'Bob Buyer', password: 'correct horse battery', role: 'customer' });
  const cleo = await seed.create('users', { email: 'cleo@example.com', full_name: 'Cleo Customer', password: 'correct horse battery', role: 'customer' });
  const products = [];
  for (const p of PRODUCTS) products.push(await seed.create('products', p));
  const order = await seed.create('orders', { user_id: bob.id });
  await seed.create('order-items', { order_id: order.id, product_id: products[0]!.id, quantity: 2 });
  await seed.create('order-items', { order_id: order.id, product_id: products[2]!.id, quantity: 1 });
  await seed.create('orders', { user_id: cleo.id });
  await seed.as(bob.id).create('reviews', { item_id: products[0]!.id, rating: 5, title: 'Great crema', body: 'Rich and chocolatey as espresso.' });
  await seed.as(cleo.id).create('reviews', { item_id: products[3]!.id, rating: 4, title: 'Consistent grind', body: 'A little loud, but very even.' });
}
