// VersionSelector: the rewrite from an unversioned request to its versioned route, per strategy.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { compileVersions } from '../../../src/model/versions.js';
import { repeatedVersionOf, unsupportedVersionOf, VersionSelector, type VersioningStrategy } from '../../../src/http/versioning/version-selection.js';

const versions = compileVersions([
  { name: 'v1', date: '2025-01-15' },
  { name: 'v2', date: '2026-03-01' },
]);
const unversioned = new Set(['events', 'healthz', 'oauth', '.well-known', 'docs']);
const req = (url: string, headers: Record<string, string> = {}): IncomingMessage => ({ url, headers }) as unknown as IncomingMessage;
const selector = (s: VersioningStrategy): VersionSelector => new VersionSelector(s, versions, unversioned);

describe('VersionSelector', () => {
  it('path: every URL as sent', () => {
    for (const url of ['/v1/products', '/products?version=1', '/']) assert.equal(selector('path').rewrite(req(url)), url);
  });

  it('query: version= or v= is taken out, the rest kept in order', () => {
    const q = selector('query');
    assert.equal(q.rewrite(req('/products?version=1&limit=2')), '/v1/products?limit=2');
    assert.equal(q.rewrite(req('/products?limit=2&v=v1&sort=-id')), '/v1/products?limit=2&sort=-id');
    assert.equal(q.rewrite(req('/products')), '/v2/products');
    assert.equal(q.rewrite(req('/products?versions=1')), '/v2/products?versions=1');
    assert.equal(q.rewrite(req('/products?version=%31')), '/v1/products');
  });

  it('query: a version named more than once is marked on the request and routed nowhere, on every path (issue 26.11)', () => {
    const q = selector('query');
    for (const [url, named] of [
      ['/products?v=1&version=2', 'v=1&version=2'],
      ['/products?version=1&limit=2&version=1', 'version=1&version=1'],
      ['/products?v=1&v=1', 'v=1&v=1'],
      ['/events?version=2&v=2', 'version=2&v=2'],
      ['/healthz?v=&v=', 'v=&v='],
    ] as const) {
      const r = req(url);
      assert.equal(q.rewrite(r), '/~unsupported-version', url);
      assert.equal(repeatedVersionOf(r), named, url);
      assert.equal(unsupportedVersionOf(r), undefined);
    }
    const once = req('/events?version=2&after=x');
    assert.equal(q.rewrite(once), '/events?version=2&after=x');
    assert.equal(repeatedVersionOf(once), undefined);
    // Other strategies leave the query to the route: `v` may be a field there.
    assert.equal(selector('header').rewrite(req('/products?v=1&v=2')), '/v2/products?v=1&v=2');
  });

  it('header and media type', () => {
    assert.equal(selector('header').rewrite(req('/users/me', { 'x-api-version': ' 1 ' })), '/v1/users/me');
    assert.equal(selector('header').rewrite(req('/users/me')), '/v2/users/me');
    assert.equal(selector('media-type').rewrite(req('/products', { accept: 'application/vnd.canon.v1+json; q=0.9, */*' })), '/v1/products');
    assert.equal(selector('media-type').rewrite(req('/products', { accept: 'application/json' })), '/v2/products');
  });

  it('paths outside the versioned API pass untouched', () => {
    for (const url of ['/events?after=x', '/healthz', '/oauth/token', '/.well-known/jwks.json', '/docs/migrations/v1-to-v2'])
      assert.equal(selector('header').rewrite(req(url, { 'x-api-version': '1' })), url);
  });

  it('a version not served is marked on the request and routed nowhere', () => {
    for (const asked of ['9', 'v0', 'abc', '1.5', '']) {
      const r = req('/products', { 'x-api-version': asked });
      assert.equal(selector('header').rewrite(r), '/~unsupported-version', asked);
      assert.equal(unsupportedVersionOf(r), asked);
    }
    assert.equal(unsupportedVersionOf(req('/products')), undefined);
  });
});
