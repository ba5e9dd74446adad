// Issue 13.2, property-based: random Unicode (astral characters included) round-trips through every free-text field of every resource, and U+0000 or an unpaired surrogate is 422 naming the field, on both stores alike.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createCustomer, createProduct, startServer, type Mode, type TestServer } from '../../support/harness.js';
import { PG_URL } from '../../support/pg.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const MODES: Mode[] = ['inject', ...(PG_URL ? (['inject/postgres'] as const) : [])];

/** A valid create body for every resource an admin (or, for reviews, a customer) can create, and who sends it. */
interface Base {
  path: string;
  body: () => Json;
  key?: () => string;
}

/** Text the stores must keep exactly: any code point but U+0000, astral planes included (no lone surrogates: fast-check's `binary` unit never makes them). */
const text = (maxLength: number): fc.Arbitrary<string> => fc.string({ unit: 'binary', minLength: 1, maxLength: Math.min(maxLength, 40) }).filter((s) => !s.includes('\u0000'));

/** Breaks well-formed text: U+0000, a high surrogate alone, or a low surrogate alone, somewhere in it. */
const illFormed = fc
  .tuple(fc.string({ maxLength: 10 }), fc.constantFrom('\u0000', '\ud83d', '\ude00', '\udc00\ud800'), fc.string({ maxLength: 10 }))
  .map(([a, bad, b]) => `${a}${bad}${b}`);

for (const mode of MODES) {
  describe(`text fields on ${mode.endsWith('postgres') ? 'PostgreSQL' : 'SQLite'}`, () => {
    let server: TestServer;
    let customerKey: string;
    let productId: string;
    const bases: Record<string, Base> = {
      products: { path: '/v2/products', body: () => ({ name: 'Plain', price: { amount: 100, currency: 'EUR' } }) },
      reviews: { path: '/v2/reviews', body: () => ({ item_id: productId, rating: 4, title: 'Plain' }), key: () => customerKey },
      orders: { path: '/v2/orders', body: () => ({}), key: () => customerKey },
      users: { path: '/v2/users', body: () => ({ email: `u-${randomUUID()}@example.com`, full_name: 'Plain', password: 'long enough password' }) },
      'api-keys': { path: '/v2/api-keys', body: () => ({ name: 'Plain' }) },
      'oauth-clients': { path: '/v2/oauth-clients', body: () => ({ name: 'Plain' }) },
      // A public address literal (no DNS in tests) and a pattern no event has: nothing is delivered to it.
      'webhook-endpoints': { path: '/v2/webhook-endpoints', body: () => ({ url: 'https://93.184.216.34/hook', events: ['never.*'] }) },
    };
    /** Every writable text field of the model, and whether it takes any well-formed text (free) or has a format of its own. */
    let fields: Array<{ resource: string; field: string; list: boolean; maxLength: number; free: boolean }>;

    before(async () => {
      server = await startServer(mode);
      customerKey = (await createCustomer(server, `text-${randomUUID()}@example.com`)).key;
      productId = (await createProduct(server)).id;
      fields = [];
      for (const r of server.runtime.model.resources.values()) {
        for (const [field, def] of Object.entries(r.fields)) {
          if (!['string', 'string[]', 'email'].includes(def.type) || def.readOnly || def.hidden) continue;
          if (r.def.internal) continue;
          // Free text takes any well-formed string; an email, a pattern or scope names do not, but must still refuse ill-formed text.
          const free = def.type !== 'email' && !def.pattern && !def.writeOnly;
          fields.push({ resource: r.name, field, list: def.type === 'string[]', maxLength: def.maxLength ?? 200, free });
        }
      }
    });
    after(async () => server?.close());

    it('the suite has a valid body for every resource with a writable text field', () => {
      const missing = [...new Set(fields.map((f) => f.resource))].filter((r) => !(r in bases));
      assert.deepEqual(missing, [], 'a new resource with text fields needs a base body here');
      assert.ok(fields.some((f) => f.resource === 'products' && f.field === 'tags' && f.list));
    });

    it('random Unicode round-trips exactly through create, read and patch', async () => {
      const free = fields.filter((f) => f.free);
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...free), fc.array(text(200), { minLength: 1, maxLength: 3 }), async (f, values) => {
          const value = f.list ? values : values[0]!.slice(0, f.maxLength);
          const base = bases[f.resource]!;
          const key = base.key?.();
          const created = await server.request('POST', base.path, { body: { ...base.body(), [f.field]: value }, ...(key ? { key } : {}) });
          assert.equal(created.status, 201, `${f.resource}.${f.field}: ${created.text}`);
          assert.deepEqual(created.body[f.field], value);
          const read = await server.request('GET', `${base.path}/${created.body.id}`, key ? { key } : {});
          assert.deepEqual(read.body[f.field], value, `${f.resource}.${f.field} as read back`);
          const patched = await server.request('PATCH', `${base.path}/${created.body.id}`, { body: { [f.field]: f.list ? [...value].reverse() : value }, ...(key ? { key } : {}) });
          assert.equal(patched.status, 200, patched.text);
          assert.deepEqual(patched.body[f.field], f.list ? [...value].reverse() : value);
        }),
        { numRuns: 40, seed: 13_2 },
      );
    });

    it('U+0000 and unpaired surrogates are 422 VALIDATION_ERROR naming the field, and nothing is stored', async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...fields), illFormed, async (f, bad) => {
          const base = bases[f.resource]!;
          const key = base.key?.();
          const value = f.list ? ['fine', bad] : bad;
          const res = await server.request('POST', base.path, { body: { ...base.body(), [f.field]: value }, ...(key ? { key } : {}) });
          assert.equal(res.status, 422, `${f.resource}.${f.field}: ${res.text}`);
          assert.equal(res.body.error.code, 'VALIDATION_ERROR');
          const named = f.list ? `${f.field}.1` : f.field;
          assert.ok(
            res.body.error.details.some((d: Json) => d.field === named),
            `${named} in ${JSON.stringify(res.body.error.details)}`,
          );
        }),
        { numRuns: 40, seed: 13_2 },
      );
      const products = await server.request('GET', '/v2/products?limit=100');
      for (const p of products.body.data as Json[]) assert.ok(!JSON.stringify(p).includes('\\u0000'));
    });

    it('a merge patch with ill-formed text is 422 and changes nothing', async () => {
      const product = await createProduct(server, { name: 'Unchanged' });
      for (const body of [{ name: 'a\u0000b' }, { description: '\ud800' }, { tags: ['ok', 'x\udfff'] }]) {
        const res = await server.request('PATCH', `/v2/products/${product.id}`, { body });
        assert.equal(res.status, 422, JSON.stringify(body));
        assert.equal(res.body.error.code, 'VALIDATION_ERROR');
      }
      assert.equal((await server.request('GET', `/v2/products/${product.id}`)).body.name, 'Unchanged');
    });
  });
}
