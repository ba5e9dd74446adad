// E2E: cursor pagination basics: walking 25 products 10 at a time via next_cursor, has_more and the Link header.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MODES, startServer, createProduct, type TestServer } from '../../support/harness.js';

for (const mode of MODES) {
  describe(`cursor pagination (${mode})`, () => {
    let server: TestServer;
    const created: string[] = [];
    before(async () => {
      server = await startServer(mode);
      for (let i = 0; i < 25; i++) created.push((await createProduct(server, { name: `Page item ${String(i).padStart(2, '0')}` })).id);
    });
    after(async () => {
      await server.close();
    });

    it('walks every product exactly once with limit=10, Link rel="next" while has_more', async () => {
      const seen: string[] = [];
      const sizes: number[] = [];
      let url: string | null = '/v2/products?limit=10';
      let pages = 0;
      while (url) {
        const res = await server.request('GET', url);
        assert.equal(res.status, 200, res.text);
        assert.ok(res.headers['cache-control'], 'lists carry Cache-Control');
        const { data, pagination } = res.body;
        assert.ok(data.length <= 10);
        sizes.push(data.length);
        seen.push(...data.map((p: { id: string }) => p.id));
        const link = res.headers['link'];
        if (pagination.has_more) {
          assert.equal(typeof pagination.next_cursor, 'string');
          assert.ok(link && /rel="next"/.test(link), `Link header with rel="next" expected, got ${link}`);
          const m = /<([^>]+)>;\s*rel="next"/.exec(link!);
          assert.ok(m, `cannot parse Link ${link}`);
          assert.ok(
            m[1]!.includes(`cursor=${encodeURIComponent(pagination.next_cursor)}`) || m[1]!.includes(`cursor=${pagination.next_cursor}`),
            `Link next ${m[1]} lacks the cursor`,
          );
          const next = res.body.links.find((l: { rel: string }) => l.rel === 'next');
          assert.ok(next, 'links.next expected');
          url = `/v2/products?limit=10&cursor=${encodeURIComponent(pagination.next_cursor)}`;
        } else {
          assert.equal(pagination.next_cursor, null);
          assert.ok(!link || !/rel="next"/.test(link), `no rel="next" on the last page, got ${link}`);
          url = null;
        }
        pages += 1;
        assert.ok(pages <= 5, 'too many pages');
      }
      assert.deepEqual(sizes, [10, 10, 5]);
      assert.equal(seen.length, 25);
      assert.equal(new Set(seen).size, 25, 'a product appeared twice');
      assert.deepEqual([...seen].sort(), [...created].sort());
    });

    it('following the Link header next URL gives the same walk', async () => {
      const seen: string[] = [];
      let url: string | null = '/v2/products?limit=10';
      while (url) {
        const res = await server.request('GET', url);
        assert.equal(res.status, 200, res.text);
        seen.push(...res.body.data.map((p: { id: string }) => p.id));
        const m = /<([^>]+)>;\s*rel="next"/.exec(res.headers['link'] ?? '');
        url = m ? m[1]! : null;
        assert.equal(Boolean(m), res.body.pagination.has_more);
      }
      assert.equal(new Set(seen).size, 25);
      assert.equal(seen.length, 25);
    });

    it('a sorted walk keeps its sort across pages', async () => {
      const names: string[] = [];
      let url: string | null = '/v2/products?limit=10&sort=-name';
      while (url) {
        const res = await server.request('GET', url);
        assert.equal(res.status, 200, res.text);
        names.push(...res.body.data.map((p: { name: string }) => p.name));
        url = res.body.pagination.has_more ? `/v2/products?limit=10&sort=-name&cursor=${encodeURIComponent(res.body.pagination.next_cursor)}` : null;
      }
      assert.equal(names.length, 25);
      assert.deepEqual(names, [...names].sort().reverse());
    });

    it('default page size is 20', async () => {
      const res = await server.request('GET', '/v2/products');
      assert.equal(res.status, 200);
      assert.equal(res.body.data.length, 20);
      assert.equal(res.body.pagination.has_more, true);
    });
  });
}
