// E2E (issue 17.5): list pages joined from memoised item texts are the bytes JSON.stringify of the page gave, for a table of queries, callers and versions.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MODES, startServer, createCustomer, type TestServer } from '../../support/harness.js';

/** The envelope's keys, in order, per pagination style (DESIGN §4). */
const ENVELOPES: Record<string, string[][]> = {
  cursor: [['data', 'pagination', 'links']],
  offset: [['data', 'pagination', 'links']],
  page: [['data', 'pagination', 'links']],
  keyset: [['data', 'pagination', 'links']],
  token: [
    ['data', 'links'],
    ['data', 'next_page_token', 'links'],
  ],
};

interface Case {
  path: string;
  style: keyof typeof ENVELOPES;
  /** Items are whole objects (no `fields=`): each must be the text of the object's own GET. */
  whole: boolean;
}

const CASES: Case[] = [
  { path: '/v2/products', style: 'cursor', whole: true },
  { path: '/v2/products?limit=3', style: 'cursor', whole: true },
  { path: '/v2/products?status=active&sort=-price.amount&limit=4', style: 'cursor', whole: true },
  { path: '/v2/products?status[in]=draft,archived&sort=name,-created_at&limit=5', style: 'cursor', whole: true },
  { path: '/v2/products?price.amount[gte]=300&price.amount[lt]=900&limit=4', style: 'cursor', whole: true },
  { path: '/v2/products?offset=2&limit=3', style: 'offset', whole: true },
  { path: '/v2/products?offset=0&limit=3&status=draft', style: 'offset', whole: true },
  { path: '/v2/products?page=2&per_page=3', style: 'page', whole: true },
  { path: '/v2/products?after_id=00000000-0000-0000-0000-000000000000&limit=3', style: 'keyset', whole: true },
  { path: '/v2/products?page_size=3', style: 'token', whole: true },
  { path: '/v2/products?fields=id,name,price&limit=5', style: 'cursor', whole: false },
  { path: '/v2/products?fields=price,id&sort=-price.amount&limit=3', style: 'cursor', whole: false },
  { path: '/v2/products?q=lamp&limit=5', style: 'cursor', whole: true },
  { path: '/v1/products?limit=4', style: 'cursor', whole: true },
  { path: '/v1/products?price_cents[gte]=300&sort=-price_cents&fields=id,price_cents,currency&limit=3', style: 'cursor', whole: false },
  { path: '/v2/users?limit=3', style: 'cursor', whole: true },
  { path: '/v2/orders?limit=3', style: 'cursor', whole: true },
  { path: '/v1/orders?limit=3', style: 'cursor', whole: true },
];

for (const mode of MODES) {
  describe(`list bodies are canonical page JSON (${mode})`, () => {
    let server: TestServer;
    let customerKey: string;
    before(async () => {
      server = await startServer(mode);
      const statuses = ['draft', 'active', 'archived'];
      for (let i = 0; i < 12; i++) {
        const res = await server.request('POST', '/v2/products', {
          body: {
            name: `${i % 2 ? 'Desk lamp' : 'Chair'} ${i}`,
            description: i % 3 ? `Item ${i}` : null,
            price: { amount: 100 * (i + 1), currency: i % 4 ? 'EUR' : 'USD' },
            status: statuses[i % 3],
            tags: i % 2 ? ['light', `t${i}`] : [],
          },
        });
        assert.equal(res.status, 201, res.text);
      }
      const customer = await createCustomer(server, `bodies-${mode.replace('/', '-')}@example.com`);
      customerKey = customer.key;
      for (let i = 0; i < 3; i++) {
        const res = await server.request('POST', '/v2/orders', { key: customerKey, body: {} });
        assert.equal(res.status, 201, res.text);
      }
    });
    after(async () => {
      await server.close();
    });

    for (const as of ['admin', 'customer'] as const) {
      it(`as ${as}: every page of the table is JSON.stringify of its own parse, keys in envelope order, items the texts of their GETs`, async () => {
        const key = as === 'admin' ? undefined : customerKey;
        for (const c of CASES) {
          const res = await server.request('GET', c.path, key ? { key } : {});
          if (res.status === 403) {
            assert.ok(as === 'customer' && c.path.startsWith('/v2/users'), `${c.path} as ${as}: 403 ${res.text}`);
            continue;
          }
          assert.equal(res.status, 200, `${c.path} as ${as}: ${res.text}`);
          assert.equal(res.text, JSON.stringify(JSON.parse(res.text)), `${c.path} as ${as}: not canonical JSON`);
          assert.ok(
            ENVELOPES[c.style]!.some((keys) => JSON.stringify(keys) === JSON.stringify(Object.keys(res.body))),
            `${c.path}: envelope ${Object.keys(res.body).join(',')}`,
          );
          assert.ok(res.body.data.length > 0, `${c.path} as ${as}: an empty page tests nothing`);
          if (!c.whole) continue;
          const version = c.path.split('/')[1];
          const resource = c.path.split('/')[2]!.split('?')[0];
          for (const item of res.body.data) {
            const one = await server.request('GET', `/${version}/${resource}/${item.id}`, key ? { key } : {});
            assert.equal(one.status, 200);
            assert.equal(JSON.stringify(item), one.text, `${c.path} as ${as}: item ${item.id} differs from its GET`);
          }
        }
      });
    }

    it('pages read again and again (kept, and rendered once per caller) answer the text, ETag and Link of their first reading, each caller its own', async () => {
      for (const c of CASES) {
        const reads: Record<'admin' | 'customer', Array<{ status: number; text: string; etag: string | undefined; link: string | undefined }>> = { admin: [], customer: [] };
        // Alternating callers on one URL: the list cache shares the rows, the renderings must stay apart.
        for (let round = 0; round < 3; round++) {
          for (const as of ['admin', 'customer'] as const) {
            const res = await server.request('GET', c.path, as === 'customer' ? { key: customerKey } : {});
            reads[as].push({ status: res.status, text: res.text, etag: res.headers.etag, link: res.headers.link });
          }
        }
        for (const as of ['admin', 'customer'] as const) {
          const [first, ...later] = reads[as];
          for (const again of later) assert.deepEqual(again, first, `${c.path} as ${as}: a later reading differs from the first`);
        }
        // Products show an administrator edit and delete links a customer does not get.
        if (c.path.startsWith('/v2/products') && c.whole) assert.notEqual(reads.admin[0]!.text, reads.customer[0]!.text, `${c.path}: both callers got one text`);
      }
    });

    it('two callers of one role and the same rows, one owning a row: each keeps its own links on every reading', async () => {
      const product = (await server.request('GET', '/v2/products?limit=1')).body.data[0];
      const other = await createCustomer(server, `bodies-other-${mode.replace('/', '-')}@example.com`);
      const review = await server.request('POST', '/v2/reviews', { key: customerKey, body: { item_id: product.id, rating: 4, title: 'Mine' } });
      assert.equal(review.status, 201, review.text);
      const path = `/v2/reviews?item_id=${product.id}&limit=5`;
      const texts: Record<string, string[]> = { author: [], other: [] };
      for (let round = 0; round < 3; round++) {
        texts.author!.push((await server.request('GET', path, { key: customerKey })).text);
        texts.other!.push((await server.request('GET', path, { key: other.key })).text);
      }
      for (const who of ['author', 'other']) for (const text of texts[who]!) assert.equal(text, texts[who]![0], `${who}: a later reading differs`);
      const rels = (text: string): string[] => JSON.parse(text).data[0].links.map((l: { rel: string }) => l.rel);
      assert.deepEqual(rels(texts.author![0]!), ['self', 'edit', 'delete']);
      assert.deepEqual(rels(texts.other![0]!), ['self']);
    });

    it('the same page read twice, and again after an unrelated write, is the same text; after a write to one of its rows it shows the write', async () => {
      const path = '/v2/products?sort=price.amount&limit=3';
      const a = await server.request('GET', path);
      const b = await server.request('GET', path);
      assert.equal(a.text, b.text);
      const first = a.body.data[0];
      const patched = await server.request('PATCH', `/v2/products/${first.id}`, { body: { name: 'Renamed first' } });
      assert.equal(patched.status, 200);
      const c = await server.request('GET', path);
      assert.equal(c.body.data[0].name, 'Renamed first');
      assert.equal(c.body.data[0].updated_at, patched.body.updated_at);
      assert.equal(JSON.stringify(c.body.data[0]), patched.text);
    });
  });
}
