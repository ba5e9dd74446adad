// Unit tests of the canonical JSON that idempotency fingerprints are computed from (DESIGN §11).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../src/services/idempotency.js';

describe('canonicalJson', () => {
  it('sorts object keys at every level, so key order does not change the fingerprint', () => {
    const a = { name: 'x', price: { currency: 'EUR', amount: 100 }, tags: [{ b: 1, a: 2 }] };
    const b = { tags: [{ a: 2, b: 1 }], price: { amount: 100, currency: 'EUR' }, name: 'x' };
    assert.equal(canonicalJson(a), canonicalJson(b));
    assert.equal(canonicalJson(a), '{"name":"x","price":{"amount":100,"currency":"EUR"},"tags":[{"a":2,"b":1}]}');
  });

  it('keeps array order: different orders are different requests', () => {
    assert.notEqual(canonicalJson({ tags: ['a', 'b'] }), canonicalJson({ tags: ['b', 'a'] }));
  });

  it('tells values apart that only differ in type or escaping', () => {
    const forms = [null, 1, '1', true, 'true', [], {}, [null], { a: null }, { a: '' }, 'line\nbreak', 'quote"', '\u00e9', 'e\u0301', 1.5, -0.25, 1e21];
    const seen = new Set(forms.map((v) => canonicalJson(v)));
    assert.equal(seen.size, forms.length);
  });

  it('is valid JSON that parses back to an equal value', () => {
    const value = { z: [1, 'two', { y: null, x: [true, false] }], a: 'caf\u00e9 \u2603 "quoted" \\ back', m: { n: { o: {} } }, e: [] };
    assert.deepEqual(JSON.parse(canonicalJson(value)), value);
  });

  it('reads a missing body as null', () => {
    assert.equal(canonicalJson(undefined), 'null');
    assert.equal(canonicalJson(null), 'null');
  });
});
