// The lean list path (src/http/transport/fast-lists.ts) against the Fastify list route: same status, headers and bytes, coded or not, and which path answered.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_KEY, MODES, createCustomer, createProduct, startServer, type TestServer, principalLimits } from '../../support/harness.js';
import { rawRequest, type RawAnswer } from '../../support/raw-http.js';

type Raw = RawAnswer;

/** Through the listening socket, where the lean path may answer; node:http sends exactly these headers and decodes nothing. */
function viaSocket(server: TestServer, path: string, headers: Record<string, string>, method = 'GET'): Promise<Raw> {
  return rawRequest(`${server.baseUrl}${path}`, method, headers);
}

/** Always through Fastify: in-process inject never reaches the server's listener. */
async function viaFastify(server: TestServer, path: string, headers: Record<string, string>, method = 'GET'): Promise<Raw> {
  const res = await server.app.inject({ method: method as 'GET', url: path, headers });
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  return { status: res.statusCode, headers: flat, bytes: res.rawPayload };
}

/** Differs per request or per moment, never per path. */
const VOLATILE = new Set(['date', 'connection', 'keep-alive', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset']);

/** What both paths must share: every other header, and the bytes (an error body's request id and time masked). */
function comparable(res: Raw): { status: number; headers: Record<string, string>; body: unknown } {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (!VOLATILE.has(k)) headers[k] = v;
  if (res.status < 400) return { status: res.status, headers, body: res.bytes.toString('base64') };
  const error = (JSON.parse(res.bytes.toString()) as { error: Record<string, unknown> }).error;
  return { status: res.status, headers, body: { error: { ...error, request_id: '<id>', timestamp: '<time>' } } };
}

/** The body as JSON, for following a page's links (identity bodies only). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function json(res: Raw): Record<string, any> {
  return JSON.parse(res.bytes.toString()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const admin = { 'x-api-key': ADMIN_KEY };

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`lean list path agrees with the Fastify list route (${mode})`, () => {
    let server: TestServer;
    let customer: { userId: string; key: string };
    let firstId: string;
    /** Pages the tests below asserted the lean path answered. */
    let answered = 0;
    before(async () => {
      server = await startServer(mode, { worker: 'off' });
      for (let i = 0; i < 14; i++) {
        const p = await createProduct(server, {
          name: `Lean list ${i}`,
          description: i % 3 === 0 ? 'a teapot of note' : 'plain',
          status: i % 4 === 0 ? 'draft' : 'active',
          price: { amount: 500 + i * 250, currency: 'EUR' },
        });
        firstId ??= p.id as string;
      }
      customer = await createCustomer(server, 'lean-list@example.com');
      await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
    });
    after(async () => {
      await server.close();
    });

    /** Sends the request both ways; returns the socket's answer and whether the lean path served it. */
    async function both(path: string, headers: Record<string, string> = admin, method = 'GET'): Promise<{ res: Raw; lean: boolean }> {
      const before = server.app.fastLists.served;
      const res = await viaSocket(server, path, headers, method);
      const lean = server.app.fastLists.served === before + 1;
      const reference = await viaFastify(server, path, headers, method);
      assert.deepEqual(comparable(res), comparable(reference), `${method} ${path} ${JSON.stringify(headers)}`);
      assert.ok(res.headers['x-request-id'], 'X-Request-Id missing');
      if (res.status >= 400) assert.equal(json(res).error.request_id, res.headers['x-request-id']);
      return { res, lean };
    }

    /** Asserts the lean path answered `path` with `status`, the same as Fastify; returns the answer. */
    async function lean(path: string, status = 200, headers: Record<string, string> = admin): Promise<Raw> {
      const r = await both(path, headers);
      assert.equal(r.res.status, status, `${path}: ${r.res.bytes.toString().slice(0, 300)}`);
      assert.equal(r.lean, true, `${path} must be answered by the lean path`);
      answered++;
      return r.res;
    }

    it('an offset page in the middle: next and prev in Link, rate-limit headers, ETag, Cache-Control, Vary, Content-Length', async () => {
      const res = await lean('/v2/products?limit=5&offset=5');
      const link = res.headers.link!;
      assert.match(link, /<\/v2\/products\?limit=5&offset=10>; rel="next"/);
      assert.match(link, /rel="prev"/);
      assert.ok(res.headers['x-ratelimit-limit'] && res.headers['x-ratelimit-remaining']);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.headers['cache-control'], 'private, no-cache');
      assert.equal(res.headers.vary, 'Accept-Encoding');
      assert.match(res.headers.etag!, /^W\//);
      assert.equal(res.headers['content-length'], String(res.bytes.length));
      assert.deepEqual(json(res).pagination, { offset: 5, limit: 5, total: 14 });
    });

    it('cursor pages, followed along next_cursor', async () => {
      const first = json(await lean('/v2/products?limit=4'));
      assert.equal(first.pagination.has_more, true);
      await lean(`/v2/products?limit=4&cursor=${encodeURIComponent(first.pagination.next_cursor as string)}`);
      await lean('/v2/products');
    });

    it('page/per_page, keyset after_id and page_token pages', async () => {
      await lean('/v2/products?page=2&per_page=4');
      await lean(`/v2/products?after_id=${firstId}&limit=3`);
      const tokenPage = json(await lean('/v2/products?page_size=4'));
      assert.ok(tokenPage.next_page_token);
      await lean(`/v2/products?page_size=4&page_token=${encodeURIComponent(tokenPage.next_page_token as string)}`);
    });

    it('filters and sorts, brackets sent as they are and percent-encoded', async () => {
      await lean('/v2/products?status=active&price.amount[gte]=1000&sort=-price.amount&limit=3&offset=3');
      await lean('/v2/products?status=active&price.amount%5Bgte%5D=1000&sort=-price.amount,name&limit=3');
      await lean('/v2/products?status=archived');
      await lean('/v2/products?sort=name&limit=20&offset=0&status=draft');
    });

    it('sparse fields and search', async () => {
      const sparse = json(await lean('/v2/products?fields=name,price&limit=5'));
      assert.deepEqual(
        Object.keys(sparse.data[0] as object).filter((k) => k !== 'id' && k !== 'links' && k !== 'object'),
        ['name', 'price'],
      );
      const found = json(await lean('/v2/products?q=a+teapot'));
      assert.ok(found.data.length > 0);
    });

    it('v1, a deprecated version: Deprecation, Sunset and its Link beside the page’s next and prev, names of v1', async () => {
      const res = await lean('/v1/products?limit=3&offset=3&sort=-price_cents&price_cents[gte]=600');
      assert.ok(res.headers.deprecation && res.headers.sunset);
      assert.match(res.headers.link!, /rel="deprecation".*rel="next".*rel="prev"/);
      assert.ok('price_cents' in (json(res).data[0] as object));
      await lean('/v1/users', 200);
    });

    it('If-None-Match: 304 without a body, for identity and coded representations; a stale tag is 200', async () => {
      const page = await lean('/v2/products?limit=5&offset=5');
      const hit = await lean('/v2/products?limit=5&offset=5', 304, { ...admin, 'if-none-match': page.headers.etag! });
      assert.equal(hit.bytes.length, 0);
      await lean('/v2/products?limit=5&offset=5', 200, { ...admin, 'if-none-match': 'W/"stale"' });
      const gzip = await lean('/v2/products?limit=5&offset=5', 200, { ...admin, 'accept-encoding': 'gzip' });
      assert.notEqual(gzip.headers.etag, page.headers.etag);
      await lean('/v2/products?limit=5&offset=5', 304, { ...admin, 'accept-encoding': 'gzip', 'if-none-match': gzip.headers.etag! });
      // The identity tag does not match the gzip representation.
      await lean('/v2/products?limit=5&offset=5', 200, { ...admin, 'accept-encoding': 'gzip', 'if-none-match': page.headers.etag! });
    });

    it('Accept-Encoding gzip and br: the same coded bytes, Content-Encoding and Content-Length; a small page stays identity', async () => {
      const gzip = await lean('/v2/products?limit=10', 200, { ...admin, 'accept-encoding': 'gzip' });
      assert.equal(gzip.headers['content-encoding'], 'gzip');
      const br = await lean('/v2/products?limit=10', 200, { ...admin, 'accept-encoding': 'gzip, br' });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(br.headers['content-length'], String(br.bytes.length));
      const small = await lean('/v2/products?status=archived', 200, { ...admin, 'accept-encoding': 'br' });
      assert.equal(small.headers['content-encoding'], undefined);
      await lean('/v2/products?limit=10', 200, { ...admin, 'accept-encoding': 'identity;q=0, gzip;q=0.5' });
    });

    it('a customer sees only its own orders and may create: the same links and bytes', async () => {
      const own = json(await lean('/v2/orders', 200, { 'x-api-key': customer.key }));
      assert.equal(own.data.length, 1);
      await lean('/v2/products?limit=2', 200, { 'x-api-key': customer.key });
    });

    it('400 for bad query parameters, in the error body, v1’s names kept', async () => {
      for (const path of [
        '/v2/products?limit=abc',
        '/v2/products?status=draft&status=active',
        '/v2/products?offset=3&cursor=x',
        '/v2/products?cursor=not-a-cursor',
        '/v2/products?sort=nope',
        '/v2/products?fields=nope',
        '/v2/products?price.amount[between]=1',
        '/v1/products?price.amount[gte]=1',
        '/v1/products?sort=-price_cents&limit=0',
      ]) {
        const res = await lean(path, 400);
        assert.equal(json(res).error.code, 'INVALID_QUERY', path);
        assert.equal(res.headers['cache-control'], 'no-store');
      }
    });

    it('a key not yet cached is looked up, then the page served', async () => {
      const created = await server.request('POST', '/v2/api-keys', { body: { name: 'list reader' } });
      assert.equal(created.status, 201);
      await lean('/v2/products?limit=3', 200, { 'x-api-key': created.body.key as string });
    });

    it('everything else goes to Fastify untouched: missing or invalid keys, nested collections, other encodings and methods', async () => {
      const [order] = json(await lean('/v2/orders', 200, { 'x-api-key': customer.key })).data as Array<{ id: string }>;
      const cases: Array<[string, Record<string, string>, string, number]> = [
        ['/v2/products?limit=3', { 'x-api-key': 'ck_not_a_real_key_0123456789abcdef' }, 'GET', 401],
        ['/v2/products?limit=3', {}, 'GET', 401],
        [`/v2/orders/${order!.id}/order-items`, { 'x-api-key': customer.key }, 'GET', 200],
        ['/v2/products?name=%ff', admin, 'GET', 400],
        ['/v2/products/', admin, 'GET', 400],
        ['/v2/Products', admin, 'GET', 404],
        ['/v2/pro%64ucts', admin, 'GET', 200],
        ['/v2/products?limit=3', admin, 'HEAD', 200],
        ['/v2/products?limit=3', { ...admin, accept: 'text/html' }, 'GET', 406],
        ['/v2/products?limit=3', { ...admin, cookie: 'unrelated=1' }, 'GET', 200],
        [`/v2/products?limit=3&${'x'.repeat(9000)}=1`, admin, 'GET', 414],
        ['/v9/products', admin, 'GET', 400],
      ];
      for (const [path, headers, method, status] of cases) {
        const { res, lean: served } = await both(path, headers, method);
        assert.equal(res.status, status, `${method} ${path.slice(0, 80)}`);
        assert.equal(served, false, `${method} ${path.slice(0, 80)} must go to Fastify`);
      }
    });

    it('under pressure, pages go to Fastify (which sheds them)', async () => {
      const app = server.app as unknown as { isUnderPressure: () => boolean };
      const original = app.isUnderPressure;
      app.isUnderPressure = () => true;
      try {
        const before = server.app.fastLists.served;
        await viaSocket(server, '/v2/products', admin);
        assert.equal(server.app.fastLists.served, before);
      } finally {
        app.isUnderPressure = original;
      }
    });

    it('declines no route of its own, and served exactly the pages above', () => {
      assert.deepEqual(server.app.fastLists.declined, {});
      assert.ok(answered > 30, `answered ${answered}`);
      assert.equal(server.app.fastLists.served, answered);
    });
  });

  describe(`lean list path under a rate limit (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      const limits = principalLimits(3);
      // The operator's metrics listener needs no credential: reading the counts spends nothing of the key's limit.
      server = await startServer(mode, { rateLimits: limits, metricsListen: { host: '127.0.0.1', port: 0 } });
    });
    after(async () => {
      await server.close();
    });

    it('counts down, then answers 429 RATE_LIMITED with Retry-After exactly as Fastify does', async () => {
      // Creating the product spends one of the three requests; the lean page the second, Fastify's the third.
      await createProduct(server);
      const servedBefore = server.app.fastLists.served;
      const ok = await viaSocket(server, '/v2/products', admin);
      assert.deepEqual([ok.status, ok.headers['x-ratelimit-limit'], ok.headers['x-ratelimit-remaining']], [200, '3', '1']);
      const okReference = await viaFastify(server, '/v2/products', admin);
      assert.deepEqual(comparable(ok), comparable(okReference));
      const refused = await viaSocket(server, '/v2/products?limit=1', admin);
      assert.equal(server.app.fastLists.served, servedBefore + 2);
      const reference = await viaFastify(server, '/v2/products?limit=1', admin);
      assert.deepEqual(comparable(refused), comparable(reference));
      assert.equal(refused.status, 429);
      const error = json(refused).error;
      assert.deepEqual([error.code, error.request_id], ['RATE_LIMITED', refused.headers['x-request-id']]);
      assert.deepEqual([refused.headers['x-ratelimit-remaining'], refused.headers['cache-control']], ['0', 'no-store']);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    });

    it('counts the version of a refused page in /metrics, as the Fastify route does', async () => {
      const metric = async (): Promise<number> => {
        const text = await (await fetch(`${server.runtime.metricsUrl!}/metrics`)).text();
        const line = text.split('\n').find((l) => l.startsWith('canon_api_requests_total{version="v2"}'));
        return line === undefined ? 0 : Number(line.split(' ').pop());
      };
      const before = await metric();
      const servedBefore = server.app.fastLists.served;
      assert.equal((await viaSocket(server, '/v2/products', admin)).status, 429);
      assert.equal(server.app.fastLists.served, servedBefore + 1);
      assert.equal(await metric(), before + 1);
      assert.equal((await viaFastify(server, '/v2/products', admin)).status, 429);
      assert.equal(await metric(), before + 2);
    });
  });

  describe(`lean list path and a hook it does not know (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode, {}, undefined, undefined, {
        configureHttp: (app) => {
          app.addHook('onRequest', async (_request, reply) => {
            reply.header('x-embedded', 'yes');
          });
        },
      });
    });
    after(async () => {
      await server.close();
    });

    it('declines every collection, and Fastify answers with the hook run', async () => {
      assert.match(server.app.fastLists.declined['/v2/products'] ?? '', /unknown app hooks: onRequest/);
      const res = await viaSocket(server, '/v2/products', admin);
      assert.deepEqual([res.status, res.headers['x-embedded']], [200, 'yes']);
      assert.equal(server.app.fastLists.served, 0);
    });
  });
}
