// The lean GET path (src/http/transport/fast-reads.ts) against the Fastify route: same status, headers and body, and which path answered.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_KEY, MODES, createCustomer, createProduct, fromFetch, fromInject, startServer, type Response, type TestServer, principalLimits } from '../../support/harness.js';
import { stable } from '../../support/same-answer.js';

/** Always through Fastify: in-process inject never reaches the server's listener. */
async function viaFastify(server: TestServer, path: string, headers: Record<string, string>, method = 'GET'): Promise<Response> {
  return fromInject(await server.app.inject({ method: method as 'GET', url: path, headers }));
}

/** Through the listening socket, where the lean path may answer. */
async function viaSocket(server: TestServer, path: string, headers: Record<string, string>, method = 'GET'): Promise<Response> {
  return fromFetch(await fetch(`${server.baseUrl}${path}`, { method, headers }));
}

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`lean GET path agrees with the Fastify route (${mode})`, () => {
    let server: TestServer;
    let product: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    let customer: { userId: string; key: string };
    let other: { userId: string; key: string };
    let othersOrder: string;
    let ownOrder: string;
    before(async () => {
      // No embedded worker: its poll (every second) is a transaction, and a read arriving while one runs is rightly
      // not answered at once; on a loaded machine a poll lasts long enough to meet a warm read (seen under load).
      server = await startServer(mode, { worker: 'off' });
      product = await createProduct(server, { name: 'Lean read' });
      customer = await createCustomer(server, 'lean-a@example.com');
      other = await createCustomer(server, 'lean-b@example.com');
      othersOrder = (await server.request('POST', '/v2/orders', { key: other.key, body: {} })).body.id;
      ownOrder = (await server.request('POST', '/v2/orders', { key: customer.key, body: {} })).body.id;
    });
    after(async () => {
      await server.close();
    });

    /**
     * Sends the request both ways; returns the socket's answer, whether the lean path served it, and whether it did
     * so within the call that received the request (a cached key and record: no promise on the way).
     */
    async function both(path: string, headers: Record<string, string>, method = 'GET'): Promise<{ res: Response; lean: boolean; immediate: boolean }> {
      const before = server.app.fastReads.served;
      const immediateBefore = server.app.fastReads.immediate;
      const res = await viaSocket(server, path, headers, method);
      const lean = server.app.fastReads.served === before + 1;
      const immediate = server.app.fastReads.immediate === immediateBefore + 1;
      const reference = await viaFastify(server, path, headers, method);
      assert.deepEqual(stable(res), stable(reference), `${method} ${path} ${JSON.stringify(headers)}`);
      assert.ok(res.headers['x-request-id'], 'X-Request-Id missing');
      if (res.body?.error) assert.equal(res.body.error.request_id, res.headers['x-request-id']);
      return { res, lean, immediate };
    }

    const admin = { 'x-api-key': ADMIN_KEY };
    /** SQLite keeps records read since the last commit in memory (Store.cachedRecord); PostgreSQL asks the database every time. */
    const held = !mode.includes('postgres');

    it('200 with ETag, Last-Modified, Cache-Control, rate-limit headers and links, served by the lean path', async () => {
      const { res, lean } = await both(`/v2/products/${product.id}`, admin);
      assert.equal(res.status, 200);
      assert.equal(lean, true);
      assert.equal(res.body.name, 'Lean read');
      assert.match(res.headers.etag!, /^"\d+-v2/);
      assert.ok(res.headers['x-ratelimit-limit']);
      assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.text)));
    });

    it('a warm read (key and record in memory) is answered at once, with the same status, headers and body', async () => {
      const p = await createProduct(server, { name: 'Warm read' });
      // The create's commit emptied the read cache: the first read waits for the store, and fills it.
      const cold = await both(`/v2/products/${p.id}`, admin);
      assert.equal(cold.res.status, 200);
      assert.deepEqual([cold.lean, cold.immediate], [true, false]);
      const warm = await both(`/v2/products/${p.id}`, admin);
      assert.deepEqual([warm.lean, warm.immediate], [true, held]);
      assert.equal(warm.res.text, cold.res.text);
      assert.equal(warm.res.headers.etag, cold.res.headers.etag);
      const conditional = await both(`/v2/products/${p.id}`, { ...admin, 'if-none-match': warm.res.headers.etag! });
      assert.deepEqual([conditional.res.status, conditional.immediate], [304, held]);
      // A key read for the first time waits for its look-up; from then on it is known.
      const created = await server.request('POST', '/v2/api-keys', { body: { name: 'warm reader' } });
      assert.equal(created.status, 201);
      const fresh = { 'x-api-key': created.body.key as string };
      assert.deepEqual([(await both(`/v2/products/${p.id}`, fresh)).immediate, (await both(`/v2/products/${p.id}`, fresh)).immediate], [false, held]);
    });

    it('a key revoked after it was cached is refused by the very next read, which goes to Fastify', async () => {
      const p = await createProduct(server, { name: 'Revocation' });
      const created = await server.request('POST', '/v2/api-keys', { body: { name: 'short-lived' } });
      const key = { 'x-api-key': created.body.key as string };
      await both(`/v2/products/${p.id}`, key);
      assert.equal((await both(`/v2/products/${p.id}`, key)).immediate, held);
      assert.equal((await server.request('DELETE', `/v2/api-keys/${created.body.id}`)).status, 204);
      const refused = await both(`/v2/products/${p.id}`, key);
      assert.deepEqual([refused.res.status, refused.res.body.error.code, refused.lean, refused.immediate], [401, 'UNAUTHENTICATED', false, false]);
    });

    it('an upper-case id reads the same object', async () => {
      const { res, lean } = await both(`/v2/products/${String(product.id).toUpperCase()}`, admin);
      assert.equal(res.status, 200);
      assert.equal(lean, true);
      assert.equal(res.body.id, product.id);
    });

    it('If-None-Match and If-Modified-Since: 304 with validators and no body; a stale tag gets 200', async () => {
      const first = await viaSocket(server, `/v2/products/${product.id}`, admin);
      const hit = await both(`/v2/products/${product.id}`, { ...admin, 'if-none-match': first.headers.etag! });
      assert.equal(hit.res.status, 304);
      assert.equal(hit.lean, true);
      assert.equal(hit.res.text, '');
      assert.equal(hit.res.headers.etag, first.headers.etag);
      const weak = await both(`/v2/products/${product.id}`, { ...admin, 'if-none-match': `"nope", W/${first.headers.etag!}` });
      assert.equal(weak.res.status, 304);
      const stale = await both(`/v2/products/${product.id}`, { ...admin, 'if-none-match': '"0-v2"' });
      assert.equal(stale.res.status, 200);
      const since = await both(`/v2/products/${product.id}`, { ...admin, 'if-modified-since': new Date(Date.now() + 3600_000).toUTCString() });
      assert.equal(since.res.status, 304);
      const before = await both(`/v2/products/${product.id}`, { ...admin, 'if-modified-since': 'Thu, 01 Jan 2015 00:00:00 GMT' });
      assert.equal(before.res.status, 200);
    });

    it("another customer's order is 404 on both paths; one's own is 200 with the same links", async () => {
      const hidden = await both(`/v2/orders/${othersOrder}`, { 'x-api-key': customer.key });
      assert.equal(hidden.res.status, 404);
      assert.equal(hidden.lean, true);
      assert.equal(hidden.res.headers['cache-control'], 'no-store');
      const own = await both(`/v2/orders/${ownOrder}`, { 'x-api-key': customer.key });
      assert.equal(own.res.status, 200);
      assert.equal(own.lean, true);
      // Again, now that both orders are in the read cache: the same answers, given at once.
      const hiddenAgain = await both(`/v2/orders/${othersOrder}`, { 'x-api-key': customer.key });
      assert.deepEqual([hiddenAgain.res.status, hiddenAgain.res.body.error.code, hiddenAgain.immediate], [404, 'NOT_FOUND', held]);
      const ownAgain = await both(`/v2/orders/${ownOrder}`, { 'x-api-key': customer.key });
      assert.deepEqual([ownAgain.res.status, ownAgain.res.text, ownAgain.immediate], [200, own.res.text, held]);
    });

    it('an unknown id is 404 NOT_FOUND in the error body', async () => {
      const { res, lean } = await both('/v2/products/0190a000-0000-7000-8000-000000000000', admin);
      assert.equal(res.status, 404);
      assert.equal(lean, true);
      assert.equal(res.body.error.code, 'NOT_FOUND');
    });

    it('a proxy-given X-Request-Id is kept', async () => {
      const res = await viaSocket(server, `/v2/products/${product.id}`, { ...admin, 'x-request-id': 'trace-123.abc' });
      assert.equal(res.headers['x-request-id'], 'trace-123.abc');
    });

    it('a write is seen by the next read (the read cache empties on commit)', async () => {
      const p = await createProduct(server, { name: 'Before' });
      const a = await viaSocket(server, `/v2/products/${p.id}`, admin);
      const patched = await server.request('PATCH', `/v2/products/${p.id}`, { body: { name: 'After' } });
      assert.equal(patched.status, 200);
      const { res, lean } = await both(`/v2/products/${p.id}`, admin);
      assert.equal(lean, true);
      assert.equal(res.body.name, 'After');
      assert.notEqual(res.headers.etag, a.headers.etag);
      assert.equal((await server.request('DELETE', `/v2/products/${p.id}`)).status, 204);
      assert.equal((await both(`/v2/products/${p.id}`, admin)).res.status, 404);
    });

    it('everything else goes to Fastify untouched', async () => {
      const cases: Array<[string, Record<string, string>, string, number]> = [
        [`/v2/products/${product.id}`, { 'x-api-key': 'ck_not_a_real_key_0123456789abcdef' }, 'GET', 401],
        [`/v2/products/${product.id}`, {}, 'GET', 401],
        [`/v2/products/${product.id}?fields=name`, admin, 'GET', 200],
        [`/v2/products/${product.id}/`, admin, 'GET', 404],
        [`/v2/products/${product.id}`, admin, 'HEAD', 200],
        [`/v2/products/${product.id}`, { ...admin, accept: 'text/html' }, 'GET', 406],
        [`/v2/products/${product.id}`, { ...admin, cookie: 'unrelated=1' }, 'GET', 200],
        ['/v2/products/not-a-uuid', admin, 'GET', 400],
        [`/v2/idempotency-keys/${product.id}`, admin, 'GET', 404],
      ];
      for (const [path, headers, method, status] of cases) {
        const { res, lean } = await both(path, headers, method);
        assert.equal(res.status, status, `${method} ${path}`);
        assert.equal(lean, false, `${method} ${path} must go to Fastify`);
      }
    });

    it('under pressure, reads go to Fastify (which sheds them)', async () => {
      const app = server.app as unknown as { isUnderPressure: () => boolean };
      const original = app.isUnderPressure;
      app.isUnderPressure = () => true;
      try {
        const before = server.app.fastReads.served;
        await viaSocket(server, `/v2/products/${product.id}`, admin);
        assert.equal(server.app.fastReads.served, before);
      } finally {
        app.isUnderPressure = original;
      }
    });
  });

  describe(`lean GET path under a rate limit (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      const limits = principalLimits(2);
      // The operator's metrics listener needs no credential: reading the counts spends nothing of the key's limit.
      server = await startServer(mode, { rateLimits: limits, metricsListen: { host: '127.0.0.1', port: 0 } });
    });
    after(async () => {
      await server.close();
    });

    it('counts down and answers 429 RATE_LIMITED with Retry-After, in the error body', async () => {
      // Creating the product spends one of the two requests.
      const p = await createProduct(server);
      const ok = await viaSocket(server, `/v2/products/${p.id}`, { 'x-api-key': ADMIN_KEY });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['x-ratelimit-limit'], '2');
      assert.equal(ok.headers['x-ratelimit-remaining'], '0');
      const before = server.app.fastReads.served;
      const refused = await viaSocket(server, `/v2/products/${p.id}`, { 'x-api-key': ADMIN_KEY });
      assert.equal(server.app.fastReads.served, before + 1);
      assert.equal(refused.status, 429);
      assert.equal(refused.body.error.code, 'RATE_LIMITED');
      assert.equal(refused.body.error.request_id, refused.headers['x-request-id']);
      assert.equal(refused.headers['x-ratelimit-remaining'], '0');
      assert.equal(refused.headers['cache-control'], 'no-store');
      const retry = Number(refused.headers['retry-after']);
      assert.ok(retry >= 1 && retry <= 30, `Retry-After ${retry}`);
    });

    it('counts the version of a refused read in /metrics, as the Fastify route does', async () => {
      const metric = async (): Promise<number> => {
        const text = await (await fetch(`${server.runtime.metricsUrl!}/metrics`)).text();
        const line = text.split('\n').find((l) => l.startsWith('canon_api_requests_total{version="v2"}'));
        return line === undefined ? 0 : Number(line.split(' ').pop());
      };
      const p = (await viaFastify(server, '/v2/products?limit=1', { 'x-api-key': ADMIN_KEY })).body as { data?: Array<{ id: string }> };
      const id = p.data?.[0]?.id ?? '01900000-0000-7000-8000-000000000001';
      const before = await metric();
      const served = server.app.fastReads.served;
      assert.equal((await viaSocket(server, `/v2/products/${id}`, { 'x-api-key': ADMIN_KEY })).status, 429);
      assert.equal(server.app.fastReads.served, served + 1, 'the lean path answered');
      assert.equal(await metric(), before + 1);
      assert.equal((await viaFastify(server, `/v2/products/${id}`, { 'x-api-key': ADMIN_KEY })).status, 429);
      assert.equal(await metric(), before + 2, 'the Fastify route counts it alike');
    });
  });
}
