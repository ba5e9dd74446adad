// q= ranked free-text search through HTTP: words of name or description, best match first, with filters and every style.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCustomer, createProduct, errorShape, MODES, startServer, type TestServer } from '../../support/harness.js';

for (const mode of MODES) {
  describe(`search (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
      await createProduct(server, { name: 'Burr grinder', description: 'Conical burrs for an even grind', price: { amount: 14900, currency: 'EUR' } });
      await createProduct(server, { name: 'Kettle', description: 'Pairs well with a burr grinder', price: { amount: 5900, currency: 'EUR' } });
      await createProduct(server, { name: 'Ceramic mug', description: 'Stoneware', price: { amount: 1800, currency: 'EUR' } });
      await createProduct(server, { name: 'Grinder brush', description: 'Cleans burrs', price: { amount: 900, currency: 'EUR' }, status: 'draft' });
      for (let i = 0; i < 30; i++)
        await createProduct(server, { name: `Filler ${i}`, description: i % 2 ? 'grinder spare part' : 'nothing to see', price: { amount: i, currency: 'EUR' } });
    });
    after(async () => server.close());

    it('finds products by words of name or description, best match first', async () => {
      const res = await server.request('GET', '/v2/products?q=burr%20grinder');
      assert.equal(res.status, 200);
      const names = res.body.data.map((p: { name: string }) => p.name);
      assert.equal(names[0], 'Burr grinder');
      assert.ok(names.includes('Kettle'));
      assert.ok(!names.includes('Ceramic mug'));
      const mug = await server.request('GET', '/v2/products?q=stoneware');
      assert.deepEqual(
        mug.body.data.map((p: { name: string }) => p.name),
        ['Ceramic mug'],
      );
    });

    it('combines with filters and pages through every match exactly once in every style', async () => {
      const all = await server.request('GET', '/v2/products?q=grinder&status=active&offset=0&limit=100');
      const total = all.body.pagination.total;
      assert.equal(total, all.body.data.length);
      assert.ok(total > 10);
      assert.ok(!all.body.data.some((p: { status: string }) => p.status !== 'active'));
      const expected = all.body.data.map((p: { id: string }) => p.id);
      const walk = async (first: string): Promise<string[]> => {
        const ids: string[] = [];
        let url: string | undefined = first;
        for (let i = 0; url && i < 50; i++) {
          const res = await server.request('GET', url);
          assert.equal(res.status, 200, res.text);
          ids.push(...res.body.data.map((p: { id: string }) => p.id));
          url = res.body.links.find((l: { rel: string }) => l.rel === 'next')?.href;
        }
        return ids;
      };
      assert.deepEqual(await walk('/v2/products?q=grinder&status=active&limit=4'), expected);
      assert.deepEqual(await walk('/v2/products?q=grinder&status=active&page_size=4'), expected);
      assert.deepEqual(await walk('/v2/products?q=grinder&status=active&page=1&per_page=4'), expected);
      const sorted = await walk('/v2/products?q=grinder&status=active&sort=price.amount&limit=5');
      assert.deepEqual([...sorted].sort(), [...expected].sort());
    });

    it('a cursor made for one search is refused for another', async () => {
      const first = await server.request('GET', '/v2/products?q=grinder&limit=2');
      const cursor = first.body.pagination.next_cursor;
      const res = await server.request('GET', `/v2/products?q=kettle&limit=2&cursor=${encodeURIComponent(cursor)}`);
      assert.equal(res.status, 400);
      assert.equal(errorShape(res).code, 'INVALID_QUERY');
    });

    it('searches reviews by title and body, for customers too', async () => {
      const customer = await createCustomer(server, `searcher-${mode}@example.com`);
      const product = await createProduct(server);
      for (const [title, body] of [
        ['Great crema', 'Rich espresso'],
        ['Too loud', 'Grinds well though'],
      ]) {
        const res = await server.request('POST', '/v2/reviews', { key: customer.key, body: { item_id: product.id, rating: 4, title, body } });
        assert.equal(res.status, 201, res.text);
      }
      const res = await server.request('GET', `/v2/reviews?q=espresso&item_id=${product.id}`, { key: customer.key });
      assert.deepEqual(
        res.body.data.map((r: { title: string }) => r.title),
        ['Great crema'],
      );
    });

    it('refuses q where nothing is searchable', async () => {
      const res = await server.request('GET', '/v2/users?q=ada');
      assert.equal(res.status, 400);
      assert.equal(errorShape(res).details?.[0]?.field, 'q');
    });
  });
}
