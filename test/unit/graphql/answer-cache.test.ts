// The answer cache's own rules (src/graphql/answer-cache.ts): kept on the second ask, only between equal stamps, per caller, within its bounds.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AnswerCache } from '../../../src/graphql/answer-cache.js';
import type { Principal } from '../../../src/model/principal.js';

const admin: Principal = { kind: 'api_key', credentialId: 'key-1', userId: null, role: 'admin', scopes: [] };
const customer: Principal = { kind: 'api_key', credentialId: 'key-2', userId: 'user-2', role: 'customer', scopes: [] };
const doc = { kind: 'Document' };

/** Asks for `key` as the engine does: first ask runs without a stamp, a later one looks up, then keeps when wanted. */
function ask(cache: AnswerCache, stamp: number, key: string, answer: string): string {
  if (cache.first(key)) return answer;
  const kept = cache.get(stamp, key);
  if (kept !== undefined) return kept;
  if (cache.wanted(key)) cache.keep(stamp, stamp, key, answer);
  return answer;
}

describe('GraphQL answer cache', () => {
  it('keeps an answer on its second ask and gives it on the third, until the stamp moves', () => {
    const cache = new AnswerCache();
    const key = cache.keyOf(admin, doc, null, {})!;
    ask(cache, 1, key, 'a');
    assert.equal(cache.stats.kept, 0);
    ask(cache, 1, key, 'a');
    assert.equal(cache.stats.kept, 1);
    assert.equal(cache.get(1, key), 'a');
    assert.equal(cache.get(2, key), undefined);
    // As new after the change: computed without a stamp on its next ask, kept on the one after.
    assert.equal(cache.first(key), true);
    assert.equal(cache.first(key), false);
    assert.equal(cache.wanted(key), true);
  });

  it('keeps nothing computed across a change: the stamps before and after must both be the current one', () => {
    const cache = new AnswerCache();
    const key = cache.keyOf(admin, doc, null, {})!;
    cache.first(key);
    assert.equal(cache.get(1, key), undefined);
    assert.equal(cache.wanted(key), true);
    cache.keep(1, 2, key, 'computed while a commit came');
    assert.equal(cache.get(1, key), undefined);
    cache.keep(0, 1, key, 'begun under an older stamp');
    assert.equal(cache.get(1, key), undefined);
    assert.equal(cache.stats.kept, 0);
  });

  it('keys callers, operation names, variables and documents apart', () => {
    const cache = new AnswerCache();
    const keys = [
      cache.keyOf(admin, doc, null, {}),
      cache.keyOf(customer, doc, null, {}),
      cache.keyOf({ ...customer, scopes: ['orders:read'] }, doc, null, {}),
      cache.keyOf(admin, doc, 'A', {}),
      cache.keyOf(admin, doc, null, { id: '1' }),
      cache.keyOf(admin, { kind: 'Document' }, null, {}),
    ];
    assert.equal(new Set(keys).size, keys.length);
    assert.equal(cache.keyOf(admin, doc, null, {}), keys[0]);
    assert.equal(cache.keyOf({ ...admin }, doc, null, {}), keys[0]);
  });

  it('stays within its bounds: entries, characters, the largest answer, the longest variables', () => {
    const cache = new AnswerCache({ maxEntries: 3, maxChars: 400, maxAnswerChars: 150, maxKeyChars: 50 });
    assert.equal(cache.keyOf(admin, doc, null, { long: 'x'.repeat(60) }), undefined);
    const keys = ['a', 'b', 'c', 'd'].map((v) => cache.keyOf(admin, doc, null, { v })!);
    for (const key of keys) {
      ask(cache, 1, key, `answer ${key}`);
      ask(cache, 1, key, `answer ${key}`);
    }
    // Three at most: the oldest made room.
    assert.deepEqual(
      keys.map((k) => cache.get(1, k) !== undefined),
      [false, true, true, true],
    );
    const big = cache.keyOf(admin, doc, null, { v: 'big' })!;
    ask(cache, 1, big, 'x'.repeat(151));
    ask(cache, 1, big, 'x'.repeat(151));
    assert.equal(cache.get(1, big), undefined);
    // 140 characters each: two fit in 400, a third pushes the oldest out.
    const wide = ['p', 'q', 'r'].map((v) => cache.keyOf(admin, doc, null, { v })!);
    for (const key of wide) {
      ask(cache, 1, key, 'y'.repeat(140 - key.length));
      ask(cache, 1, key, 'y'.repeat(140 - key.length));
    }
    assert.deepEqual(
      wide.map((k) => cache.get(1, k) !== undefined),
      [false, true, true],
    );
  });
});
