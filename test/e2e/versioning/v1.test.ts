// Version 1 of the reference API (DESIGN §10, issue 16): v2 walked back by change modules, for every kind of request, on both stores.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, FakeClock, MODES, startServer, type Mode, type TestServer } from '../../support/harness.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const DEPRECATION = `@${Date.UTC(2026, 2, 1) / 1000}`;
const SUNSET = 'Mon, 01 Mar 2027 00:00:00 GMT';

/** Every v1 response, errors and 304s included, says the version is deprecated and where the guide is. */
function assertDeprecated(res: { headers: Record<string, string> }, where: string): void {
  assert.equal(res.headers.deprecation, DEPRECATION, `${where}: Deprecation`);
  assert.equal(res.headers.sunset, SUNSET, `${where}: Sunset`);
  assert.match(res.headers.link ?? '', /<[^>]*\/docs\/migrations\/v1-to-v2>; rel="deprecation"/, `${where}: Link`);
}

function suite(mode: Mode): void {
  describe(`version 1 (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
    });
    after(async () => server.close());

    it('products: created, read, updated, filtered, sorted and sparse in v1 names; links point at /v1', async () => {
      const made: Obj[] = [];
      for (const [cents, currency] of [
        [1250, 'EUR'],
        [990, 'EUR'],
        [4000, 'USD'],
      ] as const) {
        const res = await server.request('POST', '/v1/products', { body: { name: `V1 product ${cents}`, price_cents: cents, currency, status: 'draft', tags: ['v1'] } });
        assert.equal(res.status, 201, res.text);
        assertDeprecated(res, 'POST /v1/products');
        assert.equal(res.body.price_cents, cents);
        assert.equal(res.body.currency, currency);
        assert.equal('price' in res.body, false);
        assert.match(res.headers.location ?? '', /^\/v1\/products\//);
        assert.ok(res.body.links.every((l: Obj) => l.href.startsWith('/v1/')));
        made.push(res.body);
      }
      // The same object on v2 is the newest shape.
      const v2 = await server.request('GET', `/v2/products/${made[0]!.id}`);
      assert.deepEqual(v2.body.price, { amount: 1250, currency: 'EUR' });
      assert.equal(v2.headers.deprecation, undefined);

      const got = await server.request('GET', `/v1/products/${made[0]!.id}`);
      assert.equal(got.status, 200);
      assertDeprecated(got, 'GET /v1/products/{id}');
      assert.equal(got.body.price_cents, 1250);
      const notModified = await server.request('GET', `/v1/products/${made[0]!.id}`, { headers: { 'if-none-match': got.headers.etag! } });
      assert.equal(notModified.status, 304);
      assertDeprecated(notModified, '304');

      const patched = await server.request('PATCH', `/v1/products/${made[1]!.id}`, { body: { price_cents: 995 } });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.price_cents, 995);
      assert.equal(patched.body.currency, 'EUR');

      const list = await server.request('GET', '/v1/products?status=draft&price_cents[gte]=995&sort=-price_cents&fields=id,price_cents,currency&limit=100');
      assert.equal(list.status, 200, list.text);
      assertDeprecated(list, 'GET /v1/products');
      const ours = list.body.data.filter((o: Obj) => made.some((m) => m.id === o.id));
      assert.deepEqual(
        ours.map((o: Obj) => [o.price_cents, o.currency]),
        [
          [4000, 'USD'],
          [1250, 'EUR'],
          [995, 'EUR'],
        ],
      );
      assert.deepEqual(Object.keys(ours[0]).sort(), ['currency', 'id', 'links', 'price_cents']);
      const byCurrency = await server.request('GET', '/v1/products?status=draft&currency=USD&limit=100');
      assert.deepEqual(
        byCurrency.body.data.map((o: Obj) => o.id),
        [made[2]!.id],
      );
    });

    it('errors name v1 fields and carry the deprecation headers', async () => {
      const bad = await server.request('POST', '/v1/products', { body: { name: 'No price', price_cents: -5, currency: 'EUR', status: 'active' } });
      assert.equal(bad.status, 422, bad.text);
      assertDeprecated(bad, '422');
      assert.ok(
        bad.body.error.details.some((d: Obj) => d.field === 'price_cents'),
        bad.text,
      );
      const query = await server.request('GET', '/v1/products?price_cents[gte]=abc');
      assert.equal(query.status, 400);
      assertDeprecated(query, '400');
      assert.deepEqual(
        query.body.error.details.map((d: Obj) => d.field),
        ['price_cents[gte]'],
      );
      const v2Name = await server.request('GET', '/v1/products?sort=price.amount');
      assert.equal(v2Name.status, 400, 'v2 names are not v1 names');
      const unknown = await server.request('GET', '/v1/products/00000000-0000-7000-8000-000000000000');
      assert.equal(unknown.status, 404);
      assertDeprecated(unknown, '404');
    });

    it('users: name in, name out; orders: currency at creation, total_cents and currency out', async () => {
      const user = await server.request('POST', '/v1/users', { body: { email: `v1-${Date.now()}@example.com`, name: 'Version One', password: 'long enough password' } });
      assert.equal(user.status, 201, user.text);
      assert.equal(user.body.name, 'Version One');
      assert.equal('full_name' in user.body, false);
      const v2 = await server.request('GET', `/v2/users/${user.body.id}`);
      assert.equal(v2.body.full_name, 'Version One');
      const order = await server.request('POST', '/v1/orders', { body: { user_id: user.body.id, currency: 'USD' } });
      assert.equal(order.status, 201, order.text);
      assert.equal(order.body.total_cents, 0);
      assert.equal(order.body.currency, 'USD');
      assert.equal('total' in order.body, false);
      const sorted = await server.request('GET', `/v1/users/${user.body.id}/orders?sort=-total_cents`);
      assert.equal(sorted.status, 200, sorted.text);
      assert.equal(sorted.body.data[0].total_cents, 0);
    });

    it('a version the server does not serve is 400 UNSUPPORTED_VERSION, naming those it does', async () => {
      for (const path of ['/v3/products', '/v0/users/me', '/v99']) {
        const res = await server.request('GET', path);
        assert.equal(res.status, 400, path);
        assert.equal(res.body.error.code, 'UNSUPPORTED_VERSION');
        assert.deepEqual(res.body.error.details, [{ field: 'version', message: 'must be one of v1, v2', value: path.split('/')[1] }]);
      }
      assert.equal((await server.request('GET', '/version/products')).status, 404);
    });

    it('the deprecation link leads to the migration guide, served as Markdown to anyone', async () => {
      const res = await server.request('GET', '/v1/products?limit=1');
      const guide = /<([^>]+)>; rel="deprecation"/.exec(res.headers.link ?? '')![1]!;
      const served = await server.request('GET', guide, { key: null, headers: { accept: 'text/markdown' } });
      assert.equal(served.status, 200);
      assert.equal(served.headers['content-type'], 'text/markdown; charset=utf-8');
      assert.match(served.text, /^# Migrating from v1 to v2/);
      assert.match(served.text, /price_cents/);
      const missing = await server.request('GET', '/docs/migrations/v2-to-v3', { key: null });
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error.code, 'ROUTE_NOT_FOUND');
      // Only the guides read at start exist: a path cannot reach another file.
      assert.equal((await server.request('GET', '/docs/migrations/..%2F..%2Fpackage.json', { key: null })).status, 404);
    });

    it('/metrics counts requests per version, and deprecated ones apart, naming no principal', async () => {
      const key = await server.request('POST', '/v2/api-keys', { body: { name: 'still on v1' } });
      assert.equal(key.status, 201);
      const product = await server.request('POST', '/v2/products', { body: { name: 'Counted', price: { amount: 5, currency: 'EUR' } } });
      const metric = async (name: string, labels: string): Promise<number> => {
        const text = (await server.request('GET', '/metrics')).text;
        const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
        return line ? Number(line.split(' ').pop()) : 0;
      };
      const v1Before = await metric('canon_api_requests_total', 'version="v1"');
      const deprecatedBefore = await metric('canon_deprecated_api_requests_total', 'version="v1"');
      for (let i = 0; i < 3; i++) assert.equal((await server.request('GET', `/v1/products/${product.body.id}`, { key: key.body.key })).status, 200);
      assert.equal((await server.request('GET', '/v1/products?limit=1', { key: key.body.key })).status, 200);
      assert.equal((await server.request('GET', `/v2/products/${product.body.id}`, { key: key.body.key })).status, 200);
      assert.equal(await metric('canon_api_requests_total', 'version="v1"'), v1Before + 4);
      assert.equal(await metric('canon_deprecated_api_requests_total', 'version="v1"'), deprecatedBefore + 4);
      assert.ok((await metric('canon_api_requests_total', 'version="v2"')) >= 1);
      const text = (await server.request('GET', '/metrics')).text;
      // v2 is current: no deprecated series for it; and no label names who called (issue 26.5: that goes to the log).
      assert.doesNotMatch(text, /canon_deprecated_api_requests_total\{version="v2"/);
      assert.doesNotMatch(text, /principal=/);
      assert.ok(!text.includes(key.body.id));
    });

    it('an Idempotency-Key first used on v1 replays the v1 body on v1, and is another request on v2', async () => {
      const key = `v1-${Date.now()}-${Math.random()}`;
      const body = { name: 'Once in v1', price_cents: 777, currency: 'EUR', status: 'draft' };
      const first = await server.request('POST', '/v1/products', { body, headers: { 'idempotency-key': key } });
      assert.equal(first.status, 201, first.text);
      const again = await server.request('POST', '/v1/products', { body, headers: { 'idempotency-key': key } });
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.text, first.text);
      assert.equal(again.body.price_cents, 777);
      assertDeprecated(again, 'a replay');
      const onV2 = await server.request('POST', '/v2/products', { body: { name: 'Once in v1', price: { amount: 777, currency: 'EUR' } }, headers: { 'idempotency-key': key } });
      assert.equal(onV2.status, 422);
      assert.equal(onV2.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
    });

    it('/events renders in the credential’s pin: a key pinned to v1 reads v1 payloads, a current one v2', async () => {
      const pinned = await server.request('POST', '/v2/api-keys', { body: { name: 'v1 reader', api_version: '2025-01-15' } });
      assert.equal(pinned.status, 201, pinned.text);
      assert.equal(pinned.body.api_version, '2025-01-15');
      const product = await server.request('POST', '/v2/products', { body: { name: 'Evented', price: { amount: 321, currency: 'EUR' }, status: 'draft' } });
      assert.equal(product.status, 201);
      const find = async (key?: string): Promise<Obj> => {
        for (let i = 0; i < 50; i++) {
          const page = await server.request('GET', '/events?type=product.created&limit=100', key ? { key } : {});
          assert.equal(page.status, 200, page.text);
          const hit = page.body.data.find((e: Obj) => e.data.object.id === product.body.id);
          if (hit) return hit;
          await new Promise((r) => setTimeout(r, 20));
        }
        throw new Error('the event never appeared');
      };
      const old = await find(pinned.body.key);
      assert.equal(old.api_version, '2025-01-15');
      assert.equal(old.data.object.price_cents, 321);
      assert.equal('price' in old.data.object, false);
      const current = await find();
      assert.equal(current.api_version, '2026-03-01');
      assert.deepEqual(current.data.object.price, { amount: 321, currency: 'EUR' });
      // Under the path strategy a request names no version on /events: a parameter for it is unknown.
      assert.equal((await server.request('GET', '/events?version=1')).status, 400);
    });

    it('a v1 cursor is refused on v2', async () => {
      const first = await server.request('GET', '/v1/products?limit=1');
      const next = first.body.links.find((l: Obj) => l.rel === 'next')?.href as string;
      assert.match(next, /^\/v1\/products\?/);
      const cursor = new URL(next, 'http://x').searchParams.get('cursor')!;
      const onV2 = await server.request('GET', `/v2/products?limit=1&cursor=${encodeURIComponent(cursor)}`);
      assert.equal(onV2.status, 400);
      assert.equal(onV2.headers.deprecation, undefined);
    });
  });
}

for (const mode of MODES) suite(mode);

describe('the sunset policy (CANON_VERSION_SUNSET)', () => {
  for (const transport of ['inject', 'listen'] as const) {
    it(`${transport}: off by default, v1 is served after its sunset; enforced, every v1 request is 410 with the guide's link, v2 unaffected`, async () => {
      const clock = new FakeClock(Date.UTC(2027, 2, 1, 0, 0, 1));
      const lenient = await startServer(transport, {}, undefined, clock);
      try {
        assert.equal((await lenient.request('GET', '/v1/products?limit=1')).status, 200);
      } finally {
        await lenient.close();
      }
      const strict = await startServer(transport, { versionSunset: 'enforce' }, undefined, clock);
      try {
        const product = await strict.request('POST', '/v2/products', { body: { name: 'After sunset', price: { amount: 1, currency: 'EUR' } } });
        assert.equal(product.status, 201);
        for (const [method, path] of [
          ['GET', '/v1/products'],
          ['GET', `/v1/products/${product.body.id}`],
          ['POST', '/v1/products'],
          ['GET', '/v1/nothing'],
        ] as const) {
          const res = await strict.request(method, path, method === 'POST' ? { body: { name: 'x', price_cents: 1, currency: 'EUR' } } : {});
          assert.equal(res.status, 410, `${method} ${path}: ${res.text}`);
          assert.equal(res.body.error.code, 'VERSION_SUNSET');
          assertDeprecated(res, `${method} ${path}`);
        }
        // Without credentials too: the version is gone for everyone, before authentication.
        assert.equal((await strict.request('GET', '/v1/products', { key: null })).status, 410);
        assert.equal((await strict.request('GET', `/v2/products/${product.body.id}`, { key: ADMIN_KEY })).status, 200);
      } finally {
        await strict.close();
      }
    });
  }

  it('before the sunset an enforcing server still serves v1', async () => {
    const server = await startServer('inject', { versionSunset: 'enforce' }, undefined, new FakeClock(Date.UTC(2027, 1, 28, 23, 59, 59)));
    try {
      assert.equal((await server.request('GET', '/v1/products?limit=1')).status, 200);
    } finally {
      await server.close();
    }
  });
});
