// Pure parts of `canon check`: Link headers, body links, page items, item URLs, versions, cursor tampering, verdict combination.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { byVersionInTurn } from '../../../src/check/discovery.js';
import { bodyLinks, itemHref, pageItems, parseLinkHeader, versionOf } from '../../../src/check/links.js';
import { tamper } from '../../../src/check/rules/pagination.js';
import { combine, fail, notApplicable, pass } from '../../../src/check/verdict.js';
import { templateOf, variant } from '../../../src/check/writes.js';

describe('check: reading links', () => {
  it('parses RFC 8288 Link headers, several values and several rels', () => {
    assert.deepEqual(parseLinkHeader('</v2/x?cursor=a,b>; rel="next", </docs/m>; rel="deprecation"; type="text/markdown", <https://e.x/p>; rel="prev first"'), [
      { rel: 'next', href: '/v2/x?cursor=a,b', from: 'header' },
      { rel: 'deprecation', href: '/docs/m', from: 'header' },
      { rel: 'prev', href: 'https://e.x/p', from: 'header' },
      { rel: 'first', href: 'https://e.x/p', from: 'header' },
    ]);
    assert.deepEqual(parseLinkHeader('</a>; rel=next'), [{ rel: 'next', href: '/a', from: 'header' }]);
    assert.deepEqual(parseLinkHeader(undefined), []);
    assert.deepEqual(parseLinkHeader('not a link'), []);
  });

  it('reads links arrays and HAL _links objects', () => {
    assert.deepEqual(bodyLinks({ links: [{ rel: 'Self', href: '/a', method: 'GET' }, { rel: 'x' }] }), [{ rel: 'self', href: '/a', from: 'body' }]);
    assert.deepEqual(bodyLinks({ _links: { self: { href: '/b' }, item: [{ href: '/c' }, { href: '/d' }] } }), [
      { rel: 'self', href: '/b', from: 'body' },
      { rel: 'item', href: '/c', from: 'body' },
      { rel: 'item', href: '/d', from: 'body' },
    ]);
    assert.deepEqual(bodyLinks([1, 2]), []);
  });

  it('finds page items and item URLs', () => {
    assert.deepEqual(pageItems([1]), [1]);
    assert.deepEqual(pageItems({ data: [2] }), [2]);
    assert.deepEqual(pageItems({ results: [3] }), [3]);
    assert.deepEqual(pageItems({ _embedded: { things: [4] } }), [4]);
    assert.equal(pageItems({ id: 1 }), undefined);
    const base = new URL('http://h/v2/products');
    assert.equal(itemHref({ id: 'x', links: [{ rel: 'self', href: '/v2/products/x' }] }, base), 'http://h/v2/products/x');
    assert.equal(itemHref({ id: 7 }, base), 'http://h/v2/products/7');
    assert.equal(itemHref({ id: 'a b' }, new URL('http://h/things/')), 'http://h/things/a%20b');
    assert.equal(itemHref({ name: 'no id' }, base), undefined);
    assert.equal(itemHref({ id: 'uuid', rid: 3 }, base, 'rid'), 'http://h/v2/products/3');
    assert.equal(versionOf(new URL('http://h/api/v12/x')), 'v12');
    assert.equal(versionOf(new URL('http://h/video/x')), undefined);
  });
});

describe('check: choosing collections', () => {
  it('takes them from each version in turn, so that a cut at 6 keeps every version', () => {
    const urls = ['/events', '/v2/a', '/v2/b', '/v2/c', '/v1/a', '/v1/b'].map((p) => new URL(p, 'http://h'));
    assert.deepEqual(
      byVersionInTurn(urls).map((u) => u.pathname),
      ['/events', '/v2/a', '/v1/a', '/v2/b', '/v1/b', '/v2/c'],
    );
    assert.deepEqual(byVersionInTurn([]), []);
  });
});

describe('check: tampering and verdicts', () => {
  it('changes one character in the middle of a cursor, within its alphabet', () => {
    for (const cursor of ['eyJ2IjoxfQ.abcdef', 'AAAAAAAA', '0123456789', 'aaaa-_aaaa']) {
      const t = tamper(cursor);
      assert.equal(t.length, cursor.length);
      assert.notEqual(t, cursor);
      assert.equal([...t].filter((ch, i) => ch !== cursor[i]).length, 1, `${cursor} → ${t}`);
      assert.match(t, /^[A-Za-z0-9._~-]+$/);
    }
  });

  it('combines per-collection verdicts: a fail wins over an error, an error over a pass', () => {
    const err = { status: 'error' as const, summary: 'timeout', evidence: [] };
    assert.equal(
      combine([
        { label: '/a', verdict: pass('ok') },
        { label: '/b', verdict: err },
      ]).status,
      'error',
    );
    const mixed = combine([
      { label: '/a', verdict: err },
      { label: '/b', verdict: fail('bad') },
      { label: '/c', verdict: notApplicable('none') },
    ]);
    assert.equal(mixed.status, 'fail');
    assert.equal(mixed.summary, '/b: bad');
    assert.equal(
      combine([
        { label: '/a', verdict: notApplicable('x') },
        { label: '/b', verdict: pass('y') },
      ]).status,
      'pass',
    );
    assert.equal(combine([]).status, 'not-applicable');
  });

  it('makes create bodies from an item: server fields dropped, e-mails and names unique', () => {
    const template = templateOf({ id: 1, email: 'a@b.c', full_name: 'Ada', role: 'admin', created_at: 'x', paid_at: 'y', links: [], nested: { id: 2 } })!;
    assert.deepEqual(Object.keys(template), ['email', 'full_name', 'role', 'nested']);
    const one = variant(template);
    const two = variant(template);
    assert.match(String(one.email), /^canon-check-[0-9a-f]{8}@example\.com$/);
    assert.notEqual(one.email, two.email);
    assert.match(String(one.full_name), /^Ada \(canon check [0-9a-f]{8}\)$/);
    assert.equal(one.role, 'admin');
    assert.deepEqual(one.nested, { id: 2 });
  });

  it('keeps what a document requires: a client-chosen id gets a fresh value each time; the item key is dropped', () => {
    const item = { rid: 4, id: '01a21d1f-84c0-7029-9631-f38abbf91514', version: 1, name: 'P', createdAt: 'x' };
    const template = templateOf(item, 'rid', ['id', 'version'])!;
    assert.deepEqual(Object.keys(template), ['id', 'version', 'name']);
    const [a, b] = [variant(template), variant(template)];
    assert.match(String(a.id), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.notEqual(a.id, b.id);
    assert.equal(a.version, 1);
    assert.deepEqual(Object.keys(templateOf(item, 'rid')!), ['name']);
  });
});
