// Per-collection fixtures for the generic collection suite: how to make rows, which filter and sort to walk with.
import { SYSTEM } from '../../../src/model/principal.js';
import type { ResourceService } from '../../../src/services/resource-service.js';
import type { TestServer } from '../../support/harness.js';

export interface CollectionFixture {
  /** The collection path, top-level or nested. */
  path: string;
  resource: string;
  /** Creates row number i (through the services: setup, not the thing under test) and returns its id. */
  make(i: number): Promise<string>;
  /** A filter as query parameters, and the predicate it stands for on a rendered object. */
  filter: Record<string, string>;
  matches(obj: Record<string, any>): boolean; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** A two-field sort (the id tie-break is implied). */
  sort: string;
}

const STATUSES = ['draft', 'active', 'archived'] as const;

/** Builds fixtures for every collection of the reference domain on a fresh server. */
export async function fixtures(server: TestServer): Promise<CollectionFixture[]> {
  const services: ResourceService = server.runtime.services;
  const ctx = { principal: SYSTEM };
  const create = async (resource: string, body: Record<string, unknown>, as = SYSTEM): Promise<string> => (await services.create({ principal: as }, resource, body)).record.id;
  const owner = await create('users', { email: 'owner@example.com', full_name: 'Owner', password: 'long enough password', role: 'customer' });
  const ownerPrincipal = { ...SYSTEM, userId: owner, role: 'customer' };
  const product = await create('products', { name: 'Base', price: { amount: 100, currency: 'EUR' } });
  const order = await create('orders', { user_id: owner });
  void ctx;
  return [
    {
      path: '/v2/products',
      resource: 'products',
      make: (i) =>
        create('products', { name: `Product ${i % 37}`, description: `Item number ${i}`, price: { amount: (i * 7919) % 5000, currency: 'EUR' }, status: STATUSES[i % 3] }),
      filter: { 'status[in]': 'draft,active' },
      matches: (o) => o.status !== 'archived',
      sort: '-price.amount,name',
    },
    {
      path: '/v2/users',
      resource: 'users',
      make: (i) => create('users', { email: `walker${i}@example.com`, full_name: `Walker ${i % 13}`, password: 'long enough password', role: i % 4 === 0 ? 'admin' : 'customer' }),
      filter: { role: 'customer' },
      matches: (o) => o.role === 'customer',
      sort: 'full_name,-created_at',
    },
    {
      path: '/v2/orders',
      resource: 'orders',
      make: async (i) => {
        const id = await create('orders', { user_id: owner });
        if (i % 5 === 0) await services.update(ctx, 'orders', id, 'patch', { status: 'paid' });
        return id;
      },
      filter: { status: 'pending' },
      matches: (o) => o.status === 'pending',
      sort: '-created_at,total.amount',
    },
    {
      path: `/v2/users/${owner}/orders`,
      resource: 'orders',
      make: () => create('orders', { user_id: owner }),
      filter: { 'total.amount[gte]': '0' },
      matches: () => true,
      sort: 'total.amount,-created_at',
    },
    {
      path: `/v2/orders/${order}/order-items`,
      resource: 'order-items',
      make: (i) => create('order-items', { order_id: order, product_id: product, quantity: (i % 9) + 1 }),
      filter: { product_id: product },
      matches: (o) => o.product_id === product,
      sort: '-created_at,id',
    },
    {
      path: '/v2/order-items',
      resource: 'order-items',
      make: (i) => create('order-items', { order_id: order, product_id: product, quantity: (i % 9) + 1 }),
      filter: { order_id: order },
      matches: (o) => o.order_id === order,
      sort: 'created_at,-id',
    },
    {
      path: '/v2/reviews',
      resource: 'reviews',
      make: (i) => create('reviews', { item_id: product, rating: (i % 5) + 1, title: `Review ${i}`, body: i % 2 ? 'good coffee' : 'fine tea' }, ownerPrincipal),
      filter: { 'rating[gte]': '2' },
      matches: (o) => o.rating >= 2,
      sort: '-rating,created_at',
    },
    {
      path: '/v2/api-keys',
      resource: 'api-keys',
      make: (i) => create('api-keys', { name: `key ${i % 17}`, ...(i % 2 ? { user_id: owner } : {}) }),
      filter: { user_id: owner },
      matches: (o) => o.user_id === owner,
      sort: 'name,-created_at',
    },
  ];
}

/** Compares two rendered objects by a sort spec, nulls first ascending, ties by id in the first key's direction. */
export function comparator(sort: string): (a: Record<string, unknown>, b: Record<string, unknown>) => number {
  const keys = sort.split(',').map((k) => ({ path: k.replace(/^-/, ''), desc: k.startsWith('-') }));
  if (!keys.some((k) => k.path === 'id')) keys.push({ path: 'id', desc: keys[0]!.desc });
  const at = (o: Record<string, unknown>, path: string): unknown => path.split('.').reduce<unknown>((v, p) => (v as Record<string, unknown> | null)?.[p] ?? null, o);
  return (a, b) => {
    for (const k of keys) {
      const x = at(a, k.path);
      const y = at(b, k.path);
      if (x === y) continue;
      const c = x === null ? -1 : y === null ? 1 : (x as number | string) < (y as number | string) ? -1 : 1;
      return k.desc ? -c : c;
    }
    return 0;
  };
}
