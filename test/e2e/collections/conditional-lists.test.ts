// E2E (issue 17.4): list pages carry a weak ETag over their bytes and answer If-None-Match with 304; any change in the page changes the tag.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MODES, startServer, createCustomer, createProduct, type Response, type TestServer } from '../../support/harness.js';

/** A digest, and in the listening modes the coding fetch asked for (`+br`, `+gz`: a tag per content coding, issue 31.5). */
const WEAK = /^W\/"[A-Za-z0-9_-]{27}(?:\+(?:br|gz))?"$/;

function weakEtag(res: Response): string {
  const etag = res.headers['etag'];
  assert.ok(etag, 'ETag header missing');
  assert.match(etag, WEAK);
  return etag;
}

for (const mode of MODES) {
  describe(`conditional lists (${mode})`, () => {
    let server: TestServer;
    let tag: string;
    before(async () => {
      server = await startServer(mode);
      // This suite's server is its own: its pages hold only the products made here.
      tag = `cond-${mode.replace('/', '-')}`;
      for (let i = 0; i < 5; i++) await createProduct(server, { name: `${tag} ${i}`, tags: [tag], price: { amount: 100 + i, currency: 'EUR' } });
    });
    after(async () => {
      await server.close();
    });

    const page = (extra = ''): string => `/v2/products?sort=price.amount&limit=3${extra}`;

    it('a page: 200 with a weak ETag and Cache-Control private, no-cache; the same page twice has the same tag', async () => {
      const a = await server.request('GET', page());
      assert.equal(a.status, 200, a.text);
      assert.equal(a.body.data.length, 3);
      assert.equal(a.headers['cache-control'], 'private, no-cache');
      const b = await server.request('GET', page());
      assert.equal(weakEtag(a), weakEtag(b));
      assert.equal(a.text, b.text);
    });

    it('If-None-Match with the page tag: 304, empty body, the tag again; weak and strong forms both match (weak comparison)', async () => {
      const first = await server.request('GET', page());
      const etag = weakEtag(first);
      for (const sent of [etag, etag.slice(2), `"other", ${etag}`, '*']) {
        const res = await server.request('GET', page(), { headers: { 'if-none-match': sent } });
        assert.equal(res.status, 304, `If-None-Match: ${sent}`);
        assert.equal(res.text, '');
        assert.equal(res.headers['etag'], etag);
        assert.equal(res.headers['cache-control'], 'private, no-cache');
        assert.ok(res.headers['x-request-id']);
      }
    });

    it('If-None-Match with another tag: 200 with the page', async () => {
      const res = await server.request('GET', page(), { headers: { 'if-none-match': 'W/"not-this-page"' } });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.length, 3);
    });

    it('a change to a row on the page, a new row on it, and a deleted row each change the tag (and a polling client gets 200)', async () => {
      let etag = weakEtag(await server.request('GET', page()));
      const changeAndCheck = async (what: string, change: () => Promise<void>): Promise<void> => {
        await change();
        const res = await server.request('GET', page(), { headers: { 'if-none-match': etag } });
        assert.equal(res.status, 200, `${what}: expected a new page, got ${res.status}`);
        assert.notEqual(weakEtag(res), etag, what);
        etag = weakEtag(res);
      };
      const first = (await server.request('GET', page())).body.data[0];
      await changeAndCheck('a PATCH of a row', async () => {
        const res = await server.request('PATCH', `/v2/products/${first.id}`, { body: { description: 'changed' } });
        assert.equal(res.status, 200);
      });
      await changeAndCheck('a new first row', async () => {
        await createProduct(server, { name: `${tag} cheap`, tags: [tag], price: { amount: 1, currency: 'EUR' } });
      });
      await changeAndCheck('a deleted row', async () => {
        const res = await server.request('DELETE', `/v2/products/${first.id}`);
        assert.equal(res.status, 204);
      });
      // Nothing changed since: 304.
      assert.equal((await server.request('GET', page(), { headers: { 'if-none-match': etag } })).status, 304);
    });

    it('a write elsewhere that leaves the page as it was keeps its tag (the tag is over the page, not the table)', async () => {
      const etag = weakEtag(await server.request('GET', page()));
      await createProduct(server, { name: 'unrelated product', price: { amount: 99_999, currency: 'EUR' } });
      const res = await server.request('GET', page(), { headers: { 'if-none-match': etag } });
      assert.equal(res.status, 304);
    });

    it('the same page seen by a caller with other links (a customer: no edit or delete) has another tag, and the admin tag is no 304 for it', async () => {
      const admin = await server.request('GET', page());
      const { key } = await createCustomer(server, `cond-${mode.replace('/', '-')}@example.com`);
      const customer = await server.request('GET', page(), { key });
      assert.equal(customer.status, 200);
      assert.notEqual(weakEtag(customer), weakEtag(admin));
      const res = await server.request('GET', page(), { key, headers: { 'if-none-match': weakEtag(admin) } });
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.data.map((p: { id: string }) => p.id),
        admin.body.data.map((p: { id: string }) => p.id),
      );
    });

    it('offset pages count the total into the tag; the next cursor page has its own tag', async () => {
      const offset = await server.request('GET', `/v2/products?offset=0&limit=2`);
      assert.equal(offset.status, 200, offset.text);
      const etag = weakEtag(offset);
      await createProduct(server, { name: `${tag} last`, tags: [tag], price: { amount: 90_000, currency: 'EUR' } });
      const after = await server.request('GET', `/v2/products?offset=0&limit=2`, { headers: { 'if-none-match': etag } });
      assert.equal(after.status, 200, 'the total changed, so the page did');
      const first = await server.request('GET', page());
      const next = await server.request('GET', `${page()}&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`);
      assert.equal(next.status, 200);
      assert.notEqual(weakEtag(next), weakEtag(first));
    });

    it('a v1 page has a tag of its own and answers 304 with its deprecation headers', async () => {
      const v1 = await server.request('GET', `/v1/products?limit=2`);
      assert.equal(v1.status, 200, v1.text);
      const etag = weakEtag(v1);
      const res = await server.request('GET', `/v1/products?limit=2`, { headers: { 'if-none-match': etag } });
      assert.equal(res.status, 304);
      assert.equal(res.headers['etag'], etag);
      assert.ok(res.headers['deprecation'], 'Deprecation on a v1 304');
      assert.ok(res.headers['sunset'], 'Sunset on a v1 304');
    });
  });
}
