// canon-client paging (issue 28.5, DESIGN §6): each pagination style iterated to its end equals the REST walk of the same query; pages(); laziness; the event log; v1 filter names.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, startServer, type Mode, type TestServer } from '../support/harness.js';
import { PG_URL } from '../support/pg.js';
import { canon, recordingFetch } from './support.js';

const { createClient } = canon;
const MODES: Mode[] = ['listen', ...(PG_URL ? (['listen/postgres'] as const) : [])];
const COUNT = 45;
const NIL = '00000000-0000-0000-0000-000000000000';
const MAX = 'ffffffff-ffff-ffff-ffff-ffffffffffff';
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

for (const mode of MODES) {
  describe(`canon-client paging (${mode})`, () => {
    let server: TestServer;

    /** The REST walk: GET the first URL, then each `next` link, as test/e2e/collections/walk.ts does; the ids seen. */
    const walk = async (first: string): Promise<string[]> => {
      const ids: string[] = [];
      let url: string | undefined = first;
      for (let pages = 0; url !== undefined && pages < 50; pages++) {
        const res = await server.request('GET', url);
        assert.equal(res.status, 200, res.text);
        ids.push(...res.body.data.map((o: Obj) => o.id));
        url = res.body.links.find((l: Obj) => l.rel === 'next')?.href;
      }
      return ids;
    };

    before(async () => {
      server = await startServer(mode);
      // 45 products, prices with ties (so the sort's tie-break by id matters), a third of them drafts.
      for (let i = 0; i < COUNT; i += 9) {
        await Promise.all(
          Array.from({ length: 9 }, (_, j) =>
            server.request('POST', '/v2/products', {
              body: { name: `Product ${String(i + j).padStart(2, '0')}`, price: { amount: 100 * ((i + j) % 7), currency: 'EUR' }, status: (i + j) % 3 === 0 ? 'draft' : 'active' },
            }),
          ),
        );
      }
    });
    after(async () => server.close());

    it('every style, asked for by `style` or by its own parameters, yields what the REST walk of the same query yields, to the end', async () => {
      const c = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY });
      const collect = async (params: Parameters<typeof c.products.list>[0]): Promise<string[]> => {
        const ids: string[] = [];
        for await (const p of c.products.list(params)) ids.push(p.id!);
        return ids;
      };
      const sort = '-price.amount,name';
      const cases: Array<[string, Parameters<typeof c.products.list>[0], string]> = [
        ['cursor (default)', { limit: 10, sort }, `/v2/products?limit=10&sort=${sort}`],
        ['cursor', { style: 'cursor', limit: 10, sort }, `/v2/products?limit=10&sort=${sort}`],
        ['offset', { style: 'offset', limit: 10, sort }, `/v2/products?offset=0&limit=10&sort=${sort}`],
        ['offset by its parameters', { offset: 0, limit: 10, sort }, `/v2/products?offset=0&limit=10&sort=${sort}`],
        ['page', { style: 'page', limit: 10, sort }, `/v2/products?page=1&per_page=10&sort=${sort}`],
        ['page by its parameters', { page: 1, per_page: 10, sort }, `/v2/products?page=1&per_page=10&sort=${sort}`],
        ['token', { style: 'token', limit: 10, sort }, `/v2/products?page_size=10&sort=${sort}`],
        ['token by its parameters', { page_size: 10, sort }, `/v2/products?page_size=10&sort=${sort}`],
        ['keyset', { style: 'keyset', limit: 10 }, `/v2/products?after_id=${NIL}&limit=10`],
        ['keyset descending', { style: 'keyset', limit: 10, sort: '-id' }, `/v2/products?after_id=${MAX}&limit=10&sort=-id`],
        ['filtered and sorted', { style: 'cursor', limit: 7, status: 'active', sort: 'name' }, '/v2/products?limit=7&status=active&sort=name'],
        [
          'filter operators',
          { style: 'page', limit: 4, 'price.amount[gte]': 300, 'status[in]': 'active,draft' },
          '/v2/products?page=1&per_page=4&price.amount%5Bgte%5D=300&status%5Bin%5D=active,draft',
        ],
      ];
      for (const [name, params, rest] of cases) {
        const expected = await walk(rest);
        const got = await collect(params);
        assert.deepEqual(got, expected, name);
        assert.equal(new Set(got).size, got.length, `${name}: no item twice`);
      }
      assert.equal((await collect({ style: 'offset', limit: 100 })).length, COUNT, 'one page of everything');
      assert.equal((await collect({ style: 'keyset', limit: 10 })).length, COUNT);
      assert.equal((await collect({ status: 'active', limit: 10 })).length, COUNT - 15);
    });

    it('pages() yields each page with its envelope; a broken-off iteration requests no further page', async () => {
      const recorder = recordingFetch();
      const c = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY, fetch: recorder.fetch });
      const sizes: number[] = [];
      const totals: unknown[] = [];
      for await (const page of c.products.list({ style: 'page', limit: 10 }).pages()) {
        sizes.push(page.data.length);
        totals.push(page.pagination?.total);
      }
      assert.deepEqual(sizes, [10, 10, 10, 10, 5]);
      assert.deepEqual(totals, [COUNT, COUNT, COUNT, COUNT, COUNT]);
      const tokens: Array<string | undefined> = [];
      for await (const page of c.products.list({ style: 'token', limit: 20 }).pages()) tokens.push(page.next_page_token);
      assert.equal(tokens.length, 3);
      assert.ok(tokens[0] && tokens[1] && tokens[2] === undefined, 'next_page_token absent on the last page');

      recorder.sent.length = 0;
      const listing = c.products.list({ limit: 10 });
      assert.equal(recorder.sent.length, 0, 'nothing is requested before iterating');
      let n = 0;
      for await (const _ of listing) if (++n === 12) break;
      assert.equal(recorder.sent.length, 2, 'two pages for twelve items, then nothing');
      // A listing can be iterated again, from the start.
      let again = 0;
      for await (const _ of listing) if (++again === 1) break;
      assert.equal(recorder.sent.length, 3);
      assert.match(recorder.sent[2]!.url, /\/v2\/products\?limit=10$/);
    });

    it('nested collections and the event log page the same way', async () => {
      const c = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY });
      // PostgreSQL numbers events just after their commit: wait until all 45 are listed.
      let events: string[] = [];
      for (const deadline = Date.now() + 10_000; events.length < COUNT && Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
        events = [];
        for await (const e of c.events.list({ type: 'product.created', limit: 10 })) events.push(e.id);
      }
      assert.equal(events.length, COUNT);
      assert.deepEqual(events, await walk('/events?type=product.created&limit=10'));
      const after: string[] = [];
      for await (const e of c.events.list({ after: events[39], type: ['product.created', 'order.*'] })) after.push(e.id);
      assert.deepEqual(after, events.slice(40));

      const user = await c.users.create({ email: `pager-${mode.replace('/', '-')}@example.com`, full_name: 'Pager', password: 'long enough password' });
      const orders: string[] = [];
      for (let i = 0; i < 5; i++) orders.push((await c.users.orders(user.id!).create({})).id!);
      const seen: string[] = [];
      for await (const o of c.users.orders(user.id!).list({ style: 'offset', limit: 2, sort: 'created_at' })) seen.push(o.id!);
      assert.deepEqual(seen, await walk(`/v2/users/${user.id}/orders?offset=0&limit=2&sort=created_at`));
      assert.deepEqual([...seen].sort(), [...orders].sort());
    });

    it('a v1 client pages with v1 names (price_cents) and gets v1 shapes', async () => {
      const v1 = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY, version: 1 });
      const cents: number[] = [];
      for await (const p of v1.products.list({ 'price_cents[gte]': 500, sort: 'price_cents', style: 'token', limit: 5 })) cents.push(p.price_cents!);
      assert.ok(cents.length > 0);
      assert.deepEqual(
        cents,
        [...cents].sort((a, b) => a - b),
      );
      assert.ok(cents.every((v) => v >= 500));
      assert.deepEqual(cents.length, (await walk('/v1/products?price_cents%5Bgte%5D=500&page_size=5')).length);
    });

    it('an unknown style is a TypeError before any request; a bad parameter is the server’s 400 with details', async () => {
      const c = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY });
      assert.throws(() => c.products.list({ style: 'sideways' as never }), { name: 'TypeError', message: /style must be one of/ });
      await assert.rejects(c.products.list({ limit: 1000 })[Symbol.asyncIterator]().next(), (err: unknown) => {
        assert.ok(err instanceof canon.CanonError);
        assert.equal(err.status, 400);
        assert.ok(Array.isArray(err.details) && err.details.some((d: { field?: string }) => d.field === 'limit'));
        return true;
      });
    });
  });
}
