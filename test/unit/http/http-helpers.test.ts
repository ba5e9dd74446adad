// Unit tests of the pure HTTP helpers: conditional requests (RFC 9110), negotiation and the JSON and form body guards (merge patch: test/unit/services).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../src/errors/app-error.js';
import { etagOf, ifMatchHolds, ifNoneMatchHits, notModifiedSince } from '../../../src/http/rendering/conditional.js';
import { parseFormBody, parseJsonBody } from '../../../src/http/transport/json-body.js';
import { acceptsJson } from '../../../src/http/transport/negotiate.js';

describe('conditional requests', () => {
  const record = { id: 'a', version: 3, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-02T10:00:00.500Z' };
  const access = { update: true, delete: true, actions: [] };
  const etag = etagOf(record, access, 'v2');
  it('makes a strong, quoted tag that changes with the version, the API version and the links', () => {
    assert.match(etag, /^"[A-Za-z0-9_.-]+"$/);
    assert.notEqual(etagOf({ ...record, version: 4 }, access, 'v2'), etag);
    assert.notEqual(etagOf(record, access, 'v1'), etag);
    assert.notEqual(etagOf(record, { ...access, delete: false }, 'v2'), etag);
  });
  it('If-Match compares strongly and accepts lists and *', () => {
    assert.equal(ifMatchHolds(undefined, etag), true);
    assert.equal(ifMatchHolds(etag, etag), true);
    assert.equal(ifMatchHolds(`"x", ${etag}`, etag), true);
    assert.equal(ifMatchHolds('*', etag), true);
    assert.equal(ifMatchHolds(`W/${etag}`, etag), false);
    assert.equal(ifMatchHolds('"stale"', etag), false);
  });
  it('If-None-Match compares weakly', () => {
    assert.equal(ifNoneMatchHits(`W/${etag}`, etag), true);
    assert.equal(ifNoneMatchHits('"other"', etag), false);
  });
  it('If-Modified-Since works in whole seconds and ignores bad dates', () => {
    assert.equal(notModifiedSince(new Date(record.updated_at).toUTCString(), record), true);
    assert.equal(notModifiedSince('Thu, 01 Jan 2026 00:00:00 GMT', record), false);
    assert.equal(notModifiedSince('not a date', record), false);
  });
});

describe('JSON body guard', () => {
  const bad = (text: string) =>
    assert.throws(
      () => parseJsonBody(text, 32),
      (e: unknown) => e instanceof AppError && e.code === 'INVALID_JSON',
    );
  it('parses plain JSON', () => assert.deepEqual(parseJsonBody('{"a":[1,{"b":null}]}', 32), { a: [1, { b: null }] }));
  it('rejects empty, malformed and truncated bodies', () => {
    bad('');
    bad('   ');
    bad('{"a":');
    bad("{'a':1}");
  });
  it('rejects __proto__ and constructor keys at any depth', () => {
    bad('{"__proto__":{"admin":true}}');
    bad('{"a":{"constructor":{"prototype":{}}}}');
    bad('{"a":[{"constructor":1}]}');
  });
  it('bounds nesting depth', () => {
    assert.doesNotThrow(() => parseJsonBody('['.repeat(32) + ']'.repeat(32), 32));
    bad('['.repeat(33) + ']'.repeat(33));
    bad('{"a":'.repeat(5000) + '1' + '}'.repeat(5000));
  });
  it('parses forms and rejects repeated or forbidden keys', () => {
    assert.deepEqual(parseFormBody('email=a%40b.c&password=x+y'), { email: 'a@b.c', password: 'x y' });
    assert.throws(() => parseFormBody('a=1&a=2'), AppError);
    assert.throws(() => parseFormBody('__proto__=1'), AppError);
  });
});

describe('Accept negotiation', () => {
  const cases: Array<[string | undefined, boolean]> = [
    [undefined, true],
    ['*/*', true],
    ['application/json', true],
    ['application/*', true],
    ['text/html, application/json;q=0.5', true],
    ['text/html', false],
    ['application/xml', false],
    ['application/json;q=0', false],
    ['text/html,*/*;q=0.1', true],
  ];
  for (const [accept, ok] of cases) it(`${accept ?? '(none)'} → ${ok}`, () => assert.equal(acceptsJson(accept), ok));
});
