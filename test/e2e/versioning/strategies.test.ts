// CANON_VERSIONING (DESIGN §10): query, header and media-type selection on unversioned paths, with Vary, links and errors; a version named twice is 400 (issue 26.11).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, errorShape, MODES, startServer, type Mode, type TestServer } from '../../support/harness.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const DEPRECATION = `@${Date.UTC(2026, 2, 1) / 1000}`;

interface Strategy {
  name: 'query' | 'header' | 'media-type' | 'date';
  /** How a request names `version` (`1`, `v2`, `9`): a path and headers. */
  ask(path: string, version?: string): { path: string; headers: Record<string, string> };
  /** The header that chose the version, when the strategy reads one; every object read also varies with Accept-Encoding (issue 31.5). */
  vary: string | undefined;
}

const varyOf = (s: Strategy): string => (s.vary === undefined ? 'Accept-Encoding' : `${s.vary}, Accept-Encoding`);

const withQuery = (path: string, param: string): string => `${path}${path.includes('?') ? '&' : '?'}${param}`;

const STRATEGIES: Strategy[] = [
  { name: 'query', ask: (path, v) => ({ path: v === undefined ? path : withQuery(path, `version=${v}`), headers: {} }), vary: undefined },
  { name: 'header', ask: (path, v) => ({ path, headers: v === undefined ? ({} as Record<string, string>) : { 'x-api-version': v } }), vary: 'X-API-Version' },
  {
    name: 'media-type',
    ask: (path, v) => ({ path, headers: v === undefined ? ({} as Record<string, string>) : { accept: `application/vnd.canon.v${v.replace(/^v/, '')}+json` } }),
    vary: 'Accept',
  },
  {
    name: 'date',
    // A date on or after a release picks it: 1 and v1 as two dates of v1's time, 9 before any release, v0 not a date.
    ask: (path, v) => ({
      path,
      headers:
        v === undefined
          ? ({} as Record<string, string>)
          : {
              'canon-version':
                ({ '1': '2025-06-30', v1: '2025-01-15', '2': '2026-03-01', v2: '2027-01-01', '9': '2024-12-31', v0: '2025-02-30' } as Record<string, string>)[v] ?? v,
            },
    }),
    vary: 'Canon-Version',
  },
];

function suite(mode: Mode, s: Strategy): void {
  describe(`CANON_VERSIONING=${s.name} (${mode})`, () => {
    let server: TestServer;
    let product: Obj;
    before(async () => {
      server = await startServer(mode, { versioning: s.name });
      const a = s.ask('/products', '2');
      const created = await server.request('POST', a.path, { headers: a.headers, body: { name: 'Strategic', price: { amount: 1500, currency: 'EUR' }, status: 'draft' } });
      assert.equal(created.status, 201, created.text);
      product = created.body;
    });
    after(async () => server.close());

    const get = (path: string, version?: string, extra: Record<string, string> = {}) => {
      const a = s.ask(path, version);
      return server.request('GET', a.path, { headers: { ...a.headers, ...extra } });
    };

    it('no version named: the current one, links without a version segment', async () => {
      const res = await get(`/products/${product.id}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.price, { amount: 1500, currency: 'EUR' });
      assert.equal(res.headers.deprecation, undefined);
      assert.equal(res.body.links.find((l: Obj) => l.rel === 'self').href, `/products/${product.id}`);
      assert.equal(res.headers.vary, varyOf(s));
    });

    it('v1 named: the v1 shape, deprecation headers, the version in the media type when that is the strategy', async () => {
      for (const spelling of ['1', 'v1']) {
        const res = await get(`/products/${product.id}`, spelling);
        assert.equal(res.status, 200, `${spelling}: ${res.text}`);
        assert.equal(res.body.price_cents, 1500);
        assert.equal(res.body.currency, 'EUR');
        assert.equal(res.headers.deprecation, DEPRECATION);
        assert.equal(res.headers.vary, varyOf(s));
        if (s.name === 'media-type') assert.equal(res.headers['content-type'], 'application/vnd.canon.v1+json; charset=utf-8');
        else assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      }
      const v2 = await get(`/products/${product.id}`, '2');
      if (s.name === 'media-type') assert.equal(v2.headers['content-type'], 'application/vnd.canon.v2+json; charset=utf-8');
    });

    it('a v1 list in v1 names; its next link keeps the version (query) and pages stay in v1', async () => {
      const first = await get('/products?status=draft&price_cents[gte]=1&limit=1&sort=-price_cents', '1');
      assert.equal(first.status, 200, first.text);
      assert.ok('price_cents' in first.body.data[0]);
      const next = first.body.links.find((l: Obj) => l.rel === 'next')?.href as string | undefined;
      if (next) {
        assert.match(next, /^\/products\?/);
        if (s.name === 'query') assert.match(next, /version=1/);
        const page = await get(next, s.name === 'query' ? undefined : '1');
        assert.equal(page.status, 200, page.text);
      }
    });

    it('an unknown or malformed version is 400 UNSUPPORTED_VERSION naming the served ones; errors of v1 are deprecated too', async () => {
      for (const bad of ['9', 'v0', 'abc']) {
        if (s.name === 'media-type' && bad === 'abc') continue;
        const res = await get('/products', bad);
        assert.equal(res.status, 400, `${bad}: ${res.text}`);
        assert.equal(res.body.error.code, 'UNSUPPORTED_VERSION');
        assert.deepEqual(res.body.error.details[0].message, 'must be one of v1, v2');
      }
      const err = await get('/products/00000000-0000-7000-8000-000000000000', '1');
      assert.equal(err.status, 404);
      assert.equal(err.headers.deprecation, DEPRECATION);
      if (s.name === 'media-type') assert.equal(err.headers['content-type'], 'application/vnd.canon.v1+json; charset=utf-8');
    });

    it('/events renders in the version the request names, and refuses one not served', async () => {
      for (const [asked, expect] of [
        ['1', '2025-01-15'],
        ['2', '2026-03-01'],
        [undefined, '2026-03-01'],
      ] as const) {
        const res = await get('/events?type=product.created&limit=100', asked);
        assert.equal(res.status, 200, `${asked}: ${res.text}`);
        const mine = res.body.data.find((e: Obj) => e.data.object.id === product.id);
        if (!mine) continue; // PostgreSQL stamps just after the commit; the other versions' checks still run
        assert.equal(mine.api_version, expect, String(asked));
        if (expect === '2025-01-15') assert.equal(mine.data.object.price_cents, 1500);
        else assert.deepEqual(mine.data.object.price, { amount: 1500, currency: 'EUR' });
      }
      const bad = await get('/events?limit=1', '9');
      assert.equal(bad.status, 400, bad.text);
      assert.equal(bad.body.error.code, 'UNSUPPORTED_VERSION');
    });

    it('versioned paths are not served; unversioned platform paths are', async () => {
      const res = await server.request('GET', `/v2/products/${product.id}`);
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'ROUTE_NOT_FOUND');
      assert.equal((await server.request('GET', '/healthz', { key: null })).status, 200);
      assert.equal((await server.request('GET', '/events?limit=1')).status, 200);
    });
  });
}

for (const mode of MODES) for (const s of STRATEGIES) suite(mode, s);

/** The date strategy's pins: a credential is served in the version current at its creation until its `api_version` changes. */
for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`CANON_VERSIONING=date: pins (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode, { versioning: 'date' });
    });
    after(async () => server.close());

    it('an API key is pinned at creation; its pin changed, it is served in the pinned version; Canon-Version wins and is echoed', async () => {
      const created = await server.request('POST', '/api-keys', { body: { name: 'pinned' } });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.api_version, '2026-03-01');
      assert.equal(created.headers['canon-version'], '2026-03-01');
      const key = created.body.key as string;
      const product = await server.request('POST', '/products', { key, body: { name: 'Pinned', price: { amount: 10, currency: 'EUR' } } });
      assert.equal(product.status, 201, product.text);
      const patched = await server.request('PATCH', `/api-keys/${created.body.id}`, { body: { api_version: '2025-01-15' } });
      assert.equal(patched.status, 200, patched.text);
      const pinned = await server.request('GET', `/products/${product.body.id}`, { key });
      assert.equal(pinned.status, 200);
      assert.equal(pinned.headers['canon-version'], '2025-01-15');
      assert.equal(pinned.body.price_cents, 10);
      assert.equal(pinned.headers.deprecation, DEPRECATION);
      const asked = await server.request('GET', `/products/${product.body.id}`, { key, headers: { 'canon-version': '2026-06-01' } });
      assert.equal(asked.headers['canon-version'], '2026-03-01');
      assert.deepEqual(asked.body.price, { amount: 10, currency: 'EUR' });
      const bad = await server.request('PATCH', `/api-keys/${created.body.id}`, { body: { api_version: '2025-06-01' } });
      assert.equal(bad.status, 422);
      assert.equal(bad.body.error.details[0].field, 'api_version');
    });

    it('an OAuth client created with a pin: its tokens are served in that version', async () => {
      const client = await server.request('POST', '/oauth-clients', { body: { name: 'old integration', api_version: '2025-01-15' } });
      assert.equal(client.status, 201, client.text);
      const basic = Buffer.from(`${client.body.client_id}:${client.body.client_secret}`).toString('base64');
      const token = await server.request('POST', '/oauth/token', {
        key: null,
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
      assert.equal(token.status, 200, token.text);
      const res = await server.request('GET', '/products?limit=1', { key: null, headers: { authorization: `Bearer ${token.body.access_token}` } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['canon-version'], '2025-01-15');
      assert.ok('price_cents' in res.body.data[0]);
    });

    it('a request without credentials, or with bad ones, is routed to the current version and answered 401', async () => {
      const res = await server.request('GET', '/products', { key: 'ck_not_a_real_key_000000000000' });
      assert.equal(res.status, 401);
      assert.equal(res.headers['canon-version'], '2026-03-01');
    });
  });
}

/**
 * Issue 26.11: under the query strategy a version named more than once is 400 UNSUPPORTED_VERSION, the code two
 * X-API-Version headers get under the header strategy, on resource paths, /events and the service paths alike.
 */
for (const mode of MODES.filter((m) => !m.endsWith('/postgres'))) {
  describe(`CANON_VERSIONING=query: a version named more than once (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode, { versioning: 'query' });
    });
    after(async () => server.close());

    const REPEATED = ['version=1&version=2', 'version=2&version=1', 'version=2&v=1', 'v=1&version=1', 'v=1&v=1', 'version=2&version=2', 'version=2&limit=1&v=2'];

    for (const path of ['/products', '/events', '/healthz', '/readyz', '/metrics', '/.well-known/jwks.json']) {
      it(`${path}: each repetition or conflict is 400 UNSUPPORTED_VERSION naming the parameters; one is served`, async () => {
        for (const params of REPEATED) {
          const res = await server.request('GET', `${path}?${params}`);
          assert.equal(res.status, 400, `${path}?${params}: ${res.text}`);
          const error = errorShape(res);
          assert.equal(error.code, 'UNSUPPORTED_VERSION');
          const named = params
            .split('&')
            .filter((p) => /^(version|v)=/.test(p))
            .join('&');
          assert.deepEqual(error.details, [{ field: 'version', message: 'must be named once', value: named }]);
          assert.match(error.message, /named more than once/);
        }
        for (const params of ['version=1', 'v=2', 'version=2&limit=1']) {
          const res = await server.request('GET', `${path}?${params}`);
          assert.equal(res.status, 200, `${path}?${params}: ${res.text}`);
        }
      });
    }

    it('a POST naming the version twice is refused before its body is read or anything is written', async () => {
      const res = await server.request('POST', '/products?version=2&version=1', { body: { name: 'Twice', price: { amount: 1, currency: 'EUR' } } });
      assert.equal(res.status, 400, res.text);
      assert.equal(errorShape(res).code, 'UNSUPPORTED_VERSION');
      const list = await server.request('GET', '/products?limit=100');
      assert.equal(list.status, 200);
      assert.ok(!list.body.data.some((p: Obj) => p.name === 'Twice'));
    });
  });
}

describe('CANON_VERSIONING=header: two X-API-Version headers (the code the query strategy answers repetitions with)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('listen', { versioning: 'header' });
  });
  after(async () => server.close());

  it('is 400 UNSUPPORTED_VERSION', async () => {
    const headers = new Headers([
      ['x-api-key', ADMIN_KEY],
      ['x-api-version', '1'],
      ['x-api-version', '2'],
    ]);
    const res = await fetch(`${server.baseUrl}/products`, { headers });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as Obj).error.code, 'UNSUPPORTED_VERSION');
  });
});
