// Type tests of canon-client (issue 28.2): each version's methods take and give that version's shapes, derived from the generated documents; wrong bodies, parameters and options do not compile. Run by `npm run typetest` (tstyche).
import { describe, expect, test } from 'tstyche';
import { createClient, type CanonClient, type CanonEvent, type Operation, type V1Components, type V2Components } from '../../packages/client/src/index.js';

type V2Product = V2Components['schemas']['Product'];
type V1Product = V1Components['schemas']['Product'];

const v2 = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'ck_x' });
const v1 = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'ck_x', version: 1 });

describe('createClient', () => {
  test('version 2 by default, version 1 when asked', () => {
    expect(v2).type.toBe<CanonClient<2>>();
    expect(v1).type.toBe<CanonClient<1>>();
    expect(createClient).type.not.toBeCallableWith({ baseUrl: 'http://x', version: 3 });
    const chosen = createClient({ baseUrl: 'http://x', version: Math.random() > 0.5 ? 1 : 2 });
    expect(chosen).type.toBe<CanonClient<1> | CanonClient<2>>();
    if (chosen.version === 1) expect(chosen).type.toBe<CanonClient<1>>();
    expect(createClient).type.not.toBeCallableWith({ apiKey: 'ck_x' });
  });

  test('credentials: an API key, a token (or a function), OAuth client credentials, a session', () => {
    expect(createClient).type.toBeCallableWith({ baseUrl: 'http://x', token: () => Promise.resolve('t') });
    expect(createClient).type.toBeCallableWith({ baseUrl: 'http://x', oauth: { clientId: 'a', clientSecret: 'b', scope: ['products:read'] } });
    expect(createClient).type.toBeCallableWith({ baseUrl: 'http://x', session: { email: 'a@b.c', password: 'p' }, retries: { attempts: 2, maxDelayMs: 1000 } });
    expect(createClient).type.not.toBeCallableWith({ baseUrl: 'http://x', oauth: { clientId: 'a' } });
  });
});

describe('per-version shapes', () => {
  test('get and create give each version its product', () => {
    expect(v2.products.get('id')).type.toBe<Promise<V2Product>>();
    expect(v1.products.get('id')).type.toBe<Promise<V1Product>>();
    expect(v2.products.get('id', { ifNoneMatch: '"e"' })).type.toBe<Promise<V2Product | undefined>>();
    expect(v2.products.create).type.toBeCallableWith({ name: 'x', price: { amount: 1, currency: 'EUR' } });
    expect(v1.products.create).type.toBeCallableWith({ name: 'x', price_cents: 1, currency: 'EUR' });
    expect(v2.products.create).type.not.toBeCallableWith({ name: 'x', price_cents: 1, currency: 'EUR' });
    expect(v1.products.create).type.not.toBeCallableWith({ name: 'x', price: { amount: 1, currency: 'EUR' } });
    expect(v2.products.create).type.not.toBeCallableWith({ price: { amount: 1, currency: 'EUR' } });
  });

  test('update is a merge patch: every field optional, null clears a nullable one; options are ifMatch', () => {
    expect(v2.products.update).type.toBeCallableWith('id', { description: null }, { ifMatch: '"e"' });
    expect(v2.products.update).type.not.toBeCallableWith('id', { price: 'free' });
    expect(v2.products.update).type.not.toBeCallableWith('id', {}, { ifNoneMatch: '"e"' });
    expect(v2.users.update('id', { full_name: 'x' })).type.toBe<Promise<V2Components['schemas']['User']>>();
    expect(v1.users.update).type.toBeCallableWith('id', { name: 'x' });
    expect(v1.users.update).type.not.toBeCallableWith('id', { full_name: 'x' });
  });

  test('list takes the collection’s own filters, in the version’s names, and a style', () => {
    expect(v2.products.list).type.toBeCallableWith({ status: 'active', 'price.amount[gte]': 100, sort: '-created_at', fields: 'id,name', q: 'mug', limit: 10, style: 'keyset' });
    expect(v1.products.list).type.toBeCallableWith({ 'price_cents[gte]': 100 });
    expect(v2.products.list).type.not.toBeCallableWith({ 'price_cents[gte]': 100 });
    expect(v2.products.list).type.not.toBeCallableWith({ status: 'sold' });
    expect(v2.products.list).type.not.toBeCallableWith({ style: 'sideways' });
    expect(v2.orders.list()).type.toBeAssignableTo<AsyncIterable<V2Components['schemas']['Order']>>();
  });

  test('nested collections, actions, the 202 operation, sub-resources, the event log', () => {
    expect(v2.orders.items('o').create).type.toBeCallableWith({ product_id: 'p', quantity: 1 });
    expect(v2.users.orders('u').list()).type.toBeAssignableTo<AsyncIterable<V2Components['schemas']['Order']>>();
    expect(v2.orders.cancel('o')).type.toBe<Promise<V2Components['schemas']['Order']>>();
    expect(v2.orders.pay('o')).type.toBeAssignableTo<
      Promise<
        Operation<
          { status: 'processing' },
          { status: 'processing' | 'succeeded' | 'failed'; error?: string; created_at: string; updated_at: string; links: V2Components['schemas']['Link'][] }
        >
      >
    >();
    expect(v2.webhookDeliveries.retry('d')).type.toBeAssignableTo<Promise<Operation<V2Components['schemas']['WebhookDelivery'], V2Components['schemas']['WebhookDelivery']>>>();
    expect(v2.webhookDeliveries).type.not.toHaveProperty('create');
    expect(v2.events.list).type.toBeCallableWith({ after: 'e', type: ['order.*', 'product.created'] });
    expect(v2.events.stream({ after: 'e', type: ['order.*'], signal: new AbortController().signal })).type.toBe<AsyncGenerator<CanonEvent, void, undefined>>();
    expect(v2.events.stream).type.not.toBeCallableWith({ after: 1 });
    expect(v2.users.changePassword).type.toBeCallableWith('u', { current_password: 'a', new_password: 'b' });
    expect(v2.users.changePassword).type.not.toBeCallableWith('u', { password: 'b' });
  });
});
