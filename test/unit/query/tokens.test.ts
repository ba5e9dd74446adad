// Cursor tokens: what verifies from the tokens kept in memory is exactly what the MAC accepts; forged, altered and foreign tokens never verify, kept or not.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { knownTokens, signToken, verifyToken } from '../../../src/query/tokens.js';

const payload = (i: number) => ({ v: 1, k: 'c', s: 'shape', a: [i, `01900000-0000-7000-8000-${String(i).padStart(12, '0')}`] });

/** The token as the format defines it, computed here independently: base64url JSON, a dot, 16 bytes of HMAC-SHA256. */
function expectedToken(p: unknown, secret: string): string {
  const body = Buffer.from(JSON.stringify(p)).toString('base64url');
  return `${body}.${createHmac('sha256', secret).update(body).digest().subarray(0, 16).toString('base64url')}`;
}

describe('cursor tokens', () => {
  it('a token signed twice is the same token, the format’s own, and verifies to a new copy of its payload each time', () => {
    const secret = 'tokens-test-secret-one-0123456789abcdef';
    const a = signToken(payload(1), secret);
    assert.equal(a, expectedToken(payload(1), secret));
    assert.equal(signToken(payload(1), secret), a, 'from memory, the same text');
    const first = verifyToken(a, secret) as ReturnType<typeof payload>;
    assert.deepEqual(first, payload(1));
    first.a.push('changed by a caller');
    assert.deepEqual(verifyToken(a, secret), payload(1), 'a caller changing its copy changes nothing kept');
  });

  it('a token kept under one secret does not verify under another; altered tokens never verify', () => {
    const one = 'tokens-test-secret-two-0123456789abcdef';
    const other = 'tokens-test-secret-three-0123456789abcdef';
    const token = signToken(payload(2), one);
    assert.equal(verifyToken(token, other), undefined);
    const [body, tag] = token.split('.') as [string, string];
    const flipped = `${body}.${tag[0] === 'A' ? 'B' : 'A'}${tag.slice(1)}`;
    assert.equal(verifyToken(flipped, one), undefined);
    const otherBody = Buffer.from(JSON.stringify(payload(3))).toString('base64url');
    assert.equal(verifyToken(`${otherBody}.${tag}`, one), undefined, 'another payload under the kept tag');
    assert.equal(verifyToken(`${body}.`, one), undefined);
    assert.equal(verifyToken(body, one), undefined);
    assert.equal(verifyToken(`${token}x`, one), undefined);
    assert.equal(verifyToken('x'.repeat(2049), one), undefined);
  });

  it('a genuine token this process did not sign (another process’s) verifies by its MAC, then from memory', () => {
    const secret = 'tokens-test-secret-four-0123456789abcdef';
    const theirs = expectedToken(payload(4), secret);
    const before = knownTokens(secret);
    assert.deepEqual(verifyToken(theirs, secret), payload(4));
    assert.equal(knownTokens(secret), before + 1);
    assert.deepEqual(verifyToken(theirs, secret), payload(4));
    assert.equal(signToken(payload(4), secret), theirs);
  });

  it('holds a bounded number of tokens per secret, the oldest going first, and skips long ones', () => {
    const secret = 'tokens-test-secret-five-0123456789abcdef';
    for (let i = 0; i < 5_000; i++) signToken(payload(i), secret);
    assert.equal(knownTokens(secret), 4_096);
    // Evicted or not, every token still verifies by its MAC.
    assert.deepEqual(verifyToken(expectedToken(payload(0), secret), secret), payload(0));
    const long = { ...payload(1), s: 'x'.repeat(600) };
    const before = knownTokens(secret);
    const token = signToken(long, secret);
    assert.equal(knownTokens(secret), before, 'a long token is not kept');
    assert.deepEqual(verifyToken(token, secret), long);
  });
});
