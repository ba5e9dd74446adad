// E2E: single-resource GET validators and headers, links, conditional GET (304), HEAD, and If-Match on writes (412).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MODES, startServer, createProduct, type TestServer } from '../../support/harness.js';
import { JSON_TYPE, expectError, linkOf, strongEtag } from './expect.js';

for (const mode of MODES) {
  describe(`caching and conditional requests (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
    });
    after(async () => {
      await server.close();
    });

    it('GET a product: 200 with strong ETag, Last-Modified, X-Request-Id, Cache-Control and admin links', async () => {
      const p = await createProduct(server, { name: 'Cached thing' });
      const res = await server.request('GET', `/v2/products/${p.id}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], JSON_TYPE);
      strongEtag(res);
      assert.equal(res.headers['last-modified'], new Date(res.body.updated_at).toUTCString());
      assert.ok(res.headers['x-request-id'], 'X-Request-Id missing');
      assert.equal(res.headers['cache-control'], 'private, no-cache');
      assert.equal(res.body.id, p.id);
      assert.equal(res.body.name, 'Cached thing');
      const self = `/v2/products/${p.id}`;
      assert.deepEqual(linkOf(res.body, 'self'), { rel: 'self', href: self, method: 'GET' });
      assert.deepEqual(linkOf(res.body, 'edit'), { rel: 'edit', href: self, method: 'PATCH' });
      assert.deepEqual(linkOf(res.body, 'delete'), { rel: 'delete', href: self, method: 'DELETE' });
    });

    it('X-Request-Id differs between requests', async () => {
      const p = await createProduct(server);
      const a = await server.request('GET', `/v2/products/${p.id}`);
      const b = await server.request('GET', `/v2/products/${p.id}`);
      assert.ok(a.headers['x-request-id'] && b.headers['x-request-id']);
      assert.notEqual(a.headers['x-request-id'], b.headers['x-request-id']);
    });

    it('If-None-Match with the current ETag: 304 with empty body', async () => {
      const p = await createProduct(server);
      const first = await server.request('GET', `/v2/products/${p.id}`);
      const etag = strongEtag(first);
      const res = await server.request('GET', `/v2/products/${p.id}`, { headers: { 'if-none-match': etag } });
      assert.equal(res.status, 304);
      assert.equal(res.text, '');
      assert.equal(res.headers['etag'], etag);
      assert.ok(res.headers['x-request-id']);
    });

    it('If-None-Match with another ETag: 200 with the body', async () => {
      const p = await createProduct(server);
      const res = await server.request('GET', `/v2/products/${p.id}`, { headers: { 'if-none-match': '"not-the-tag"' } });
      assert.equal(res.status, 200);
      assert.equal(res.body.id, p.id);
    });

    it('If-Modified-Since = Last-Modified: 304 with empty body', async () => {
      const p = await createProduct(server);
      const first = await server.request('GET', `/v2/products/${p.id}`);
      const lm = first.headers['last-modified'];
      assert.ok(lm);
      const res = await server.request('GET', `/v2/products/${p.id}`, { headers: { 'if-modified-since': lm } });
      assert.equal(res.status, 304);
      assert.equal(res.text, '');
    });

    it('If-Modified-Since before Last-Modified: 200', async () => {
      const p = await createProduct(server);
      const res = await server.request('GET', `/v2/products/${p.id}`, { headers: { 'if-modified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' } });
      assert.equal(res.status, 200);
    });

    it('HEAD: 200, empty body, same ETag, Content-Type, Last-Modified and Cache-Control as GET', async () => {
      const p = await createProduct(server);
      const get = await server.request('GET', `/v2/products/${p.id}`);
      const head = await server.request('HEAD', `/v2/products/${p.id}`);
      assert.equal(head.status, 200);
      assert.equal(head.text, '');
      assert.equal(head.headers['etag'], get.headers['etag']);
      assert.equal(head.headers['content-type'], get.headers['content-type']);
      assert.equal(head.headers['last-modified'], get.headers['last-modified']);
      assert.equal(head.headers['cache-control'], get.headers['cache-control']);
      assert.ok(head.headers['x-request-id']);
    });

    it('If-None-Match: * and a weak form of the current ETag both give 304', async () => {
      const p = await createProduct(server);
      const etag = strongEtag(await server.request('GET', `/v2/products/${p.id}`));
      for (const inm of ['*', `W/${etag}`, `"other", ${etag}`]) {
        const res = await server.request('GET', `/v2/products/${p.id}`, { headers: { 'if-none-match': inm } });
        assert.equal(res.status, 304, `If-None-Match: ${inm}`);
        assert.equal(res.text, '');
      }
    });

    it('HEAD on a list: 200, empty body, same Content-Type and Cache-Control as GET', async () => {
      const get = await server.request('GET', '/v2/products');
      const head = await server.request('HEAD', '/v2/products');
      assert.equal(head.status, 200);
      assert.equal(head.text, '');
      assert.equal(head.headers['content-type'], get.headers['content-type']);
      assert.equal(head.headers['cache-control'], get.headers['cache-control']);
    });

    it('If-Match: * succeeds; a weak If-Match never matches (strong comparison): 412', async () => {
      const p = await createProduct(server);
      const path = `/v2/products/${p.id}`;
      const etag = strongEtag(await server.request('GET', path));
      expectError(await server.request('PATCH', path, { headers: { 'if-match': `W/${etag}` }, body: { name: 'weak' } }), 412, 'PRECONDITION_FAILED');
      const star = await server.request('PATCH', path, { headers: { 'if-match': '*' }, body: { name: 'star' } });
      assert.equal(star.status, 200, star.text);
      assert.equal(star.body.name, 'star');
    });

    it('the ETag changes after each write (PATCH, PUT, PATCH)', async () => {
      const p = await createProduct(server);
      const path = `/v2/products/${p.id}`;
      const seen = new Set<string>([strongEtag(await server.request('GET', path))]);
      const writes: Array<[string, unknown]> = [
        ['PATCH', { name: 'one' }],
        ['PUT', { name: 'two', price: { amount: 5, currency: 'EUR' } }],
        ['PATCH', { description: 'three' }],
      ];
      for (const [method, body] of writes) {
        const w = await server.request(method, path, { body });
        assert.equal(w.status, 200, w.text);
        const tag = strongEtag(w);
        const g = await server.request('GET', path);
        assert.equal(g.headers['etag'], tag, 'write response ETag equals the following GET ETag');
        assert.ok(!seen.has(tag), `ETag ${tag} was reused after ${method}`);
        seen.add(tag);
      }
    });

    for (const method of ['PATCH', 'PUT', 'DELETE'] as const) {
      it(`${method} with a stale If-Match: 412 PRECONDITION_FAILED and nothing changes`, async () => {
        const p = await createProduct(server, { name: 'Original' });
        const path = `/v2/products/${p.id}`;
        const stale = strongEtag(await server.request('GET', path));
        const bump = await server.request('PATCH', path, { body: { description: 'bumped' } });
        assert.equal(bump.status, 200);
        const current = strongEtag(bump);
        assert.notEqual(current, stale);
        const body = method === 'DELETE' ? undefined : method === 'PUT' ? { name: 'Replaced', price: { amount: 1, currency: 'EUR' } } : { name: 'Patched' };
        const res = await server.request(method, path, { headers: { 'if-match': stale }, ...(body ? { body } : {}) });
        expectError(res, 412, 'PRECONDITION_FAILED');
        const after = await server.request('GET', path);
        assert.equal(after.status, 200);
        assert.equal(after.headers['etag'], current);
        assert.equal(after.body.name, 'Original');
        assert.equal(after.body.description, 'bumped');
      });

      it(`${method} with the current If-Match succeeds`, async () => {
        const p = await createProduct(server, { name: 'Original' });
        const path = `/v2/products/${p.id}`;
        const current = strongEtag(await server.request('GET', path));
        const body = method === 'DELETE' ? undefined : method === 'PUT' ? { name: 'Replaced', price: { amount: 1, currency: 'EUR' } } : { name: 'Patched' };
        const res = await server.request(method, path, { headers: { 'if-match': current }, ...(body ? { body } : {}) });
        if (method === 'DELETE') {
          assert.equal(res.status, 204);
          assert.equal(res.text, '');
          const gone = await server.request('GET', path);
          expectError(gone, 404, 'NOT_FOUND');
        } else {
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.name, method === 'PUT' ? 'Replaced' : 'Patched');
          assert.notEqual(res.headers['etag'], current);
        }
      });
    }
  });
}
