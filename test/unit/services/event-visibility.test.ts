// Event filters in memory: glob matching (linear time, `_` and `.` literal), the type-pattern syntax, and who sees what.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileModel } from '../../../src/model/compile.js';
import type { Principal } from '../../../src/model/principal.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { commerce } from '../../../examples/commerce/index.js';
import { eventFilterFor, eventMatcher, globMatches, TYPE_PATTERN } from '../../../src/services/event-visibility.js';
import type { StoredEvent } from '../../../src/store/types.js';

describe('event type globs', () => {
  for (const [pattern, type, expected] of [
    ['order.*', 'order.created', true],
    ['order.*', 'order_item.created', false],
    ['*.deleted', 'product.deleted', true],
    ['*', 'anything.at_all', true],
    ['order_item.created', 'orderXitem.created', false],
    ['o*r.p*d', 'order.paid', true],
    ['o*r.p*d', 'order.paix', false],
    ['**', '', true],
    ['a*', '', false],
  ] as const) {
    it(`${pattern} ${expected ? 'matches' : 'does not match'} ${type}`, () => assert.equal(globMatches(pattern, type), expected));
  }

  it('runs in linear time on patterns that make backtracking matchers explode', () => {
    const text = 'a'.repeat(5_000);
    const started = process.hrtime.bigint();
    assert.equal(globMatches('*a*a*a*a*a*a*a*a*a*a*a*a*b', text), false);
    // A generous bound: the exponential regex equivalent does not finish at all.
    assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 2_000);
  });

  it('the type= syntax allows at most four * per pattern', () => {
    assert.ok(TYPE_PATTERN.test('order.*'));
    assert.ok(TYPE_PATTERN.test('*.*.*.*'));
    assert.ok(!TYPE_PATTERN.test('*a*a*a*a*'));
    assert.ok(!TYPE_PATTERN.test('Order.*'));
    assert.ok(!TYPE_PATTERN.test(''));
    assert.ok(!TYPE_PATTERN.test(`${'a'.repeat(101)}`));
  });
});

describe('who sees which events', () => {
  const model = compileModel(withPlatform(commerce));
  const event = (over: Partial<StoredEvent>): StoredEvent => ({
    id: 'e',
    sequence: 1,
    type: 'order.created',
    resource: 'orders',
    object_id: 'o',
    owner_id: 'u1',
    api_version: '2026-03-01',
    created_at: '2026-01-01T00:00:00.000Z',
    data: { object: {} },
    ...over,
  });
  const principal = (over: Partial<Principal>): Principal => ({ kind: 'api_key', credentialId: 'k', userId: 'u1', role: 'customer', scopes: [], ...over });

  it('an admin sees every event; a customer only its own', () => {
    const admin = eventMatcher(eventFilterFor(model, principal({ role: 'admin', userId: null }), undefined));
    const customer = eventMatcher(eventFilterFor(model, principal({}), undefined));
    assert.ok(admin(event({ owner_id: 'u2' })) && admin(event({ owner_id: null })));
    assert.ok(customer(event({})));
    assert.ok(!customer(event({ owner_id: 'u2' })));
    assert.ok(!customer(event({ owner_id: null, resource: 'products', type: 'product.created' })));
  });

  it('a customer credential bound to no user sees nothing owned by anyone', () => {
    const none = eventMatcher(eventFilterFor(model, principal({ userId: null }), undefined));
    assert.ok(!none(event({})) && !none(event({ owner_id: null })));
  });

  it('scopes narrow the resources; type patterns narrow the types', () => {
    const scoped = eventMatcher(eventFilterFor(model, principal({ role: 'admin', scopes: ['products:read'] }), ['*.created']));
    assert.ok(scoped(event({ resource: 'products', type: 'product.created', owner_id: null })));
    assert.ok(!scoped(event({ resource: 'products', type: 'product.deleted', owner_id: null })));
    assert.ok(!scoped(event({})));
  });
});
