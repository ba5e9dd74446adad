// Unit tests of the canonical JSON that idempotency fingerprints are computed from (DESIGN §11).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../../src/services/idempotency.js';

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

  it('gives the same text whether or not the keys arrived sorted (native fast path and the built form agree)', () => {
    const pairs: Array<[unknown, unknown]> = [
      [
        { a: 1, b: { c: [1, { d: 2, e: 3 }] } },
        { b: { c: [1, { e: 3, d: 2 }] }, a: 1 },
      ],
      // Integer-like keys come first in property order whatever the insertion order: "10" < "9" as text.
      [
        { 10: 'x', 9: 'y', a: 'z' },
        { a: 'z', 9: 'y', 10: 'x' },
      ],
      [
        { '': 1, A: 2, a: 3, é: 4 },
        { é: 4, a: 3, A: 2, '': 1 },
      ],
      [
        [{ b: 1, a: 2 }, 'x'],
        [{ a: 2, b: 1 }, 'x'],
      ],
    ];
    for (const [sorted, unsorted] of pairs) assert.equal(canonicalJson(sorted), canonicalJson(unsorted));
    assert.equal(canonicalJson({ 10: 'x', 9: 'y' }), '{"10":"x","9":"y"}');
  });

  it('writes what JSON cannot hold the same way on either path', () => {
    // undefined (in an object or an array), NaN and Infinity are not JSON: the built form writes null.
    assert.equal(canonicalJson({ a: undefined, b: 1 }), '{"a":null,"b":1}');
    assert.equal(canonicalJson([undefined, Number.NaN, Number.POSITIVE_INFINITY]), '[null,null,null]');
    assert.equal(canonicalJson({ b: [1, undefined], a: 2 }), '{"a":2,"b":[1,null]}');
  });

  it('reads a missing body as null', () => {
    assert.equal(canonicalJson(undefined), 'null');
    assert.equal(canonicalJson(null), 'null');
  });
});
