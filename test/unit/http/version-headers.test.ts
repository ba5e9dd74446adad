// Deprecation headers of a deprecated version (RFC 9745, RFC 8594), found from the request path alone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileVersions } from '../../../src/model/versions.js';
import { deprecationHeaders, VersionHeaders } from '../../../src/http/versioning/version-headers.js';
import { bodyUp, viewDown, pathUp, type VersionChange } from '../../../src/model/version-changes.js';

const versions = compileVersions([
  { name: 'v1', date: '2025-01-15', deprecation: { date: '2026-03-01', sunset: '2027-03-01', guide: '/docs/migrations/v1-to-v2' } },
  { name: 'v2', date: '2026-03-01' },
]);

describe('deprecation headers', () => {
  it('an sf-date, an IMF-fixdate and a deprecation link; absolute with a public URL', () => {
    const v1 = versions.find((v) => v.name === 'v1')!;
    assert.deepEqual(deprecationHeaders(v1, undefined), {
      deprecation: '@1772323200',
      sunset: 'Mon, 01 Mar 2027 00:00:00 GMT',
      link: '</docs/migrations/v1-to-v2>; rel="deprecation"',
    });
    assert.equal(deprecationHeaders(v1, 'https://api.example.com/')!.link, '<https://api.example.com/docs/migrations/v1-to-v2>; rel="deprecation"');
    assert.equal(
      deprecationHeaders(
        versions.find((v) => v.name === 'v2')!,
        undefined,
      ),
      undefined,
    );
  });

  it('matches the version segment exactly', () => {
    const headers = new VersionHeaders(versions, undefined);
    for (const url of ['/v1', '/v1/products', '/v1?x=1', '/v1/products/1?fields=id']) assert.equal(headers.forUrl(url)?.sunsetAt, Date.UTC(2027, 2, 1), url);
    for (const url of ['/v2/products', '/v10/products', '/v1x', '/events', '/', '/docs/v1']) assert.equal(headers.forUrl(url), undefined, url);
  });

  it('a sunset before the deprecation, or a date not YYYY-MM-DD, is refused when versions compile', () => {
    assert.throws(
      () =>
        compileVersions([
          { name: 'v1', date: '2025-01-15', deprecation: { date: '2026-03-01', sunset: '2026-02-01', guide: '/g' } },
          { name: 'v2', date: '2026-03-01' },
        ]),
      /sunset/,
    );
    assert.throws(
      () =>
        compileVersions([
          { name: 'v1', date: '2025-01-15', deprecation: { date: '1 March 2026', sunset: '2027-03-01', guide: '/g' } },
          { name: 'v2', date: '2026-03-01' },
        ]),
      /YYYY-MM-DD/,
    );
  });
});

describe('a read-only nest (a field clients never write)', () => {
  const change: VersionChange = {
    description: 'total',
    resource: 'orders',
    fields: [{ nest: { into: 'total', parts: { amount: 'total_cents', currency: 'currency' }, readOnly: true } }],
  };
  it('leaves request bodies as sent, so `currency` at creation stays an input', () => {
    assert.deepEqual(bodyUp(change, { user_id: 'u', currency: 'USD' }), { user_id: 'u', currency: 'USD' });
  });
  it('still shows the old fields and translates their paths', () => {
    assert.deepEqual(viewDown(change, { id: 'o', total: { amount: 250, currency: 'USD' } }), { id: 'o', total_cents: 250, currency: 'USD' });
    assert.equal(pathUp(change, 'total_cents'), 'total.amount');
    assert.equal(pathUp(change, 'currency'), 'total.currency');
  });
});
