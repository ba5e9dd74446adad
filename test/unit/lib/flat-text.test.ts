// flatText returns the same text: ASCII, other scripts, astral characters, escapes, and a lone surrogate (kept as it is).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { flatText } from '../../../src/lib/flat-text.js';

it('returns text equal to what it was given, however it was joined', () => {
  let joined = '{';
  for (let i = 0; i < 200; i++) joined += `"k${i}":${JSON.stringify(`v${i} ünï ☕ 𝄞`)},`;
  joined += '"end":null}';
  for (const text of ['', 'plain', 'ünïcödé ☕ 𝄞', '\u0000\u001f', joined, JSON.stringify('\ud800 lone, escaped by JSON')]) {
    assert.equal(flatText(text), text);
  }
});

it('keeps a lone surrogate, which UTF-8 cannot carry, by returning the text as it is', () => {
  for (const text of ['a\ud800b', 'end \udfff', `${'x'.repeat(50)}\ud83d`]) assert.equal(flatText(text), text);
});
