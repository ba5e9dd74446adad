// Named relations both ways and action operation names, derived from belongsTo and the actions (src/model/relations.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel } from '../../../src/model/compile.js';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import { withPlatform } from '../../../src/runtime/app-def.js';

const model = compileModel(withPlatform(commerce));
const names = (resource: string): Record<string, string> => Object.fromEntries(model.resources.get(resource)!.relations.map((r) => [r.name, `${r.kind} ${r.resource}.${r.field}`]));

describe('relations of the reference app', () => {
  it('follow belongsTo both ways, named from the foreign key and the child', () => {
    assert.deepEqual(names('orders'), { user: 'one users.user_id', items: 'many order-items.order_id' });
    assert.deepEqual(names('order-items'), { order: 'one orders.order_id', product: 'one products.product_id' });
    assert.deepEqual(names('products'), { orderItems: 'many order-items.product_id', reviews: 'many reviews.item_id' });
    assert.deepEqual(names('reviews'), { item: 'one products.item_id', user: 'one users.user_id' });
    assert.deepEqual(names('users'), {
      orders: 'many orders.user_id',
      reviews: 'many reviews.user_id',
      apiKeys: 'many api-keys.user_id',
      webhookEndpoints: 'many webhook-endpoints.user_id',
    });
    assert.deepEqual(names('webhook-deliveries'), { endpoint: 'one webhook-endpoints.endpoint_id' });
  });

  it('leave internal resources out (sessions are no relation of users)', () => {
    assert.ok(!('sessions' in names('users')));
    assert.deepEqual(model.resources.get('sessions')!.relations, []);
  });

  it('name POST actions by verb and singular; GET actions have none', () => {
    assert.deepEqual(model.resources.get('orders')!.actionNames, { cancel: 'cancelOrder', payment: 'payOrder' });
    assert.deepEqual(model.resources.get('webhook-endpoints')!.actionNames, { 'rotate-secret': 'rotateSecretWebhookEndpoint' });
    assert.deepEqual(model.resources.get('webhook-deliveries')!.actionNames, { retry: 'retryWebhookDelivery' });
  });
});

describe('relation names that collide', () => {
  const people = defineResource({
    name: 'people',
    singular: 'person',
    fields: { email: f.email({ required: true }), role: f.enum(['admin']) },
    permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
  });

  it('take the foreign key into a derived inverse name', () => {
    const loans = defineResource({
      name: 'loans',
      singular: 'loan',
      fields: { lender_id: f.uuid(), borrower_id: f.uuid() },
      belongsTo: [
        { resource: 'people', field: 'lender_id' },
        { resource: 'people', field: 'borrower_id' },
      ],
      permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
    });
    const m = compileModel(defineApp({ resources: [people, loans], users: 'people' }));
    assert.deepEqual(
      m.resources.get('people')!.relations.map((r) => r.name),
      ['loans', 'loansByBorrower'],
    );
    assert.deepEqual(
      m.resources.get('loans')!.relations.map((r) => r.name),
      ['lender', 'borrower'],
    );
  });

  it('refuse an explicit name a field already has', () => {
    const notes = defineResource({
      name: 'notes',
      singular: 'note',
      fields: { author_id: f.uuid(), author: f.string() },
      belongsTo: [{ resource: 'people', field: 'author_id', relation: 'author' }],
      permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
    });
    assert.throws(() => compileModel(defineApp({ resources: [people, notes], users: 'people' })), /relation name author is taken/);
  });

  it('honour the names an author gives', () => {
    const notes = defineResource({
      name: 'notes',
      singular: 'note',
      fields: { author_id: f.uuid() },
      belongsTo: [{ resource: 'people', field: 'author_id', relation: 'writer', inverse: 'writings' }],
      permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
    });
    const m = compileModel(defineApp({ resources: [people, notes], users: 'people' }));
    assert.deepEqual(m.resources.get('notes')!.relations[0], { name: 'writer', kind: 'one', resource: 'people', field: 'author_id' });
    assert.deepEqual(m.resources.get('people')!.relations[0], { name: 'writings', kind: 'many', resource: 'notes', field: 'author_id' });
  });
});
