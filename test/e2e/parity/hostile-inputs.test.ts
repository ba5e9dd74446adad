// Issue 13, store parity: one table of hostile inputs (strings, numbers at the bounds, dates, cursors, charsets, encodings, oversized errors) runs against SQLite and PostgreSQL; both must give the expected status, error code and stored value, and the same as each other.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, createCustomer, createProduct, fromInject, startServer, type Mode, type Response, type TestServer } from '../../support/harness.js';
import { PG_URL } from '../../support/pg.js';
import { MAX_AMOUNT } from '../../../src/model/money.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const MODES: Mode[] = ['inject', ...(PG_URL ? (['inject/postgres'] as const) : [])];

/** What a case may use: objects made in `before`, the same in shape on every store. */
interface Fixture {
  server: TestServer;
  productId: string;
  orderA: string;
  orderB: string;
  /** A cursor for the second page of users, of order A's items, and of products sorted by name. */
  usersCursor: string;
  itemsCursorA: string;
  nameSortToken: string;
  customerKey: string;
}

interface Request {
  method: string;
  url: string;
  headers?: Record<string, string>;
  /** JSON-encoded when an object; raw when a string or Buffer. */
  body?: unknown;
}

interface Case {
  name: string;
  request: (f: Fixture) => Request;
  status: number;
  /** The error code (`error.code`, or the OAuth `error` string), absent on success. */
  code?: string;
  /** What the case stored, read back through the API: compared across stores and with `expect`. */
  stored?: (f: Fixture, res: Response) => Promise<unknown>;
  expect?: unknown;
  /** Extra checks on the response. */
  check?: (res: Response) => void;
}

const product = (fields: Json): Json => ({ name: 'Hostile', price: { amount: 100, currency: 'EUR' }, ...fields });
const json = { 'content-type': 'application/json' };
const readBack =
  (field: string) =>
  async (f: Fixture, res: Response): Promise<unknown> =>
    res.status === 201 ? (await f.server.request('GET', `/v2/products/${res.body.id}`)).body[field] : null;

const CASES: Case[] = [
  // Strings (13.2).
  { name: 'U+0000 in a product name', request: () => ({ method: 'POST', url: '/v2/products', body: product({ name: 'a\u0000b' }) }), status: 422, code: 'VALIDATION_ERROR' },
  {
    name: 'a lone high surrogate in a tag',
    request: () => ({ method: 'POST', url: '/v2/products', body: product({ tags: ['fine', '\ud800'] }) }),
    status: 422,
    code: 'VALIDATION_ERROR',
  },
  {
    name: 'a lone low surrogate in a user’s full_name',
    request: () => ({ method: 'POST', url: '/v2/users', body: { email: `h-${randomUUID()}@example.com`, full_name: 'x\udc00', password: 'long enough password' } }),
    status: 422,
    code: 'VALIDATION_ERROR',
  },
  { name: 'U+0000 in an API key’s name', request: () => ({ method: 'POST', url: '/v2/api-keys', body: { name: '\u0000' } }), status: 422, code: 'VALIDATION_ERROR' },
  {
    name: 'astral characters round-trip',
    request: () => ({ method: 'POST', url: '/v2/products', body: product({ name: '𝄞 🎉 𠜎 \u{10FFFD}' }) }),
    status: 201,
    stored: readBack('name'),
    expect: '𝄞 🎉 𠜎 \u{10FFFD}',
  },
  {
    name: 'U+0000 in the login email (no credentials)',
    request: () => ({ method: 'POST', url: '/v2/sessions', body: { email: 'a\u0000@example.com', password: 'whatever it is' } }),
    status: 401,
    code: 'UNAUTHENTICATED',
  },
  {
    name: 'a lone surrogate as the login password',
    request: () => ({ method: 'POST', url: '/v2/sessions', body: { email: 'nobody@example.com', password: '\ud83d' } }),
    status: 401,
    code: 'UNAUTHENTICATED',
  },
  { name: '%00 in a filter', request: () => ({ method: 'GET', url: '/v2/products?status=%00' }), status: 400, code: 'INVALID_QUERY' },
  { name: '%00 in a search', request: () => ({ method: 'GET', url: '/v2/products?q=a%00b' }), status: 400, code: 'INVALID_QUERY' },
  { name: 'an encoded surrogate (CESU-8) in a search', request: () => ({ method: 'GET', url: '/v2/products?q=%ED%A0%80' }), status: 400, code: 'INVALID_QUERY' },
  { name: 'invalid UTF-8 percent-encoding in a filter', request: () => ({ method: 'GET', url: '/v2/users?email=%FF%FE' }), status: 400, code: 'INVALID_QUERY' },
  {
    name: 'a %00 client_id at the token endpoint',
    request: () => ({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=%00&client_secret=x',
    }),
    status: 401,
    code: 'invalid_client',
  },
  {
    name: 'a session cookie holding %00',
    request: () => ({ method: 'GET', url: '/v2/sessions/current', headers: { cookie: 'canon_session=%00abc' } }),
    status: 401,
    code: 'UNAUTHENTICATED',
  },

  // Numbers at the bounds (13.4).
  {
    name: 'a price of exactly MAX_AMOUNT',
    request: () => ({ method: 'POST', url: '/v2/products', body: product({ price: { amount: MAX_AMOUNT, currency: 'EUR' } }) }),
    status: 201,
    stored: readBack('price'),
    expect: { amount: MAX_AMOUNT, currency: 'EUR' },
  },
  {
    name: 'a price of MAX_AMOUNT + 1',
    request: () => ({ method: 'POST', url: '/v2/products', body: product({ price: { amount: MAX_AMOUNT + 1, currency: 'EUR' } }) }),
    status: 422,
    code: 'VALIDATION_ERROR',
    check: (res) => assert.equal(res.body.error.details[0].field, 'price.amount'),
  },
  {
    name: 'a price of 2^53 − 1',
    request: () => ({ method: 'POST', url: '/v2/products', body: product({ price: { amount: Number.MAX_SAFE_INTEGER, currency: 'EUR' } }) }),
    status: 422,
    code: 'VALIDATION_ERROR',
  },
  {
    name: 'a price of 1e300',
    request: () => ({ method: 'POST', url: '/v2/products', headers: json, body: '{"name":"x","price":{"amount":1e300,"currency":"EUR"}}' }),
    status: 422,
    code: 'VALIDATION_ERROR',
  },
  {
    name: 'a negative price',
    request: () => ({ method: 'POST', url: '/v2/products', body: product({ price: { amount: -1, currency: 'EUR' } }) }),
    status: 422,
    code: 'VALIDATION_ERROR',
  },
  {
    name: 'a fractional price',
    request: () => ({ method: 'POST', url: '/v2/products', body: product({ price: { amount: 1.5, currency: 'EUR' } }) }),
    status: 422,
    code: 'VALIDATION_ERROR',
  },
  {
    name: 'a quantity of 1001',
    request: (f) => ({ method: 'POST', url: `/v2/orders/${f.orderB}/order-items`, body: { product_id: f.productId, quantity: 1001 } }),
    status: 422,
    code: 'VALIDATION_ERROR',
  },
  { name: 'a 20-digit amount filter', request: () => ({ method: 'GET', url: '/v2/products?price.amount[gte]=99999999999999999999' }), status: 400, code: 'INVALID_QUERY' },

  // Dates (13.5).
  { name: 'year 0000', request: () => ({ method: 'GET', url: '/v2/products?created_at[gt]=0000-01-01T00:00:00Z' }), status: 400, code: 'INVALID_QUERY' },
  { name: '30 February', request: () => ({ method: 'GET', url: '/v2/products?created_at[gt]=2020-02-30' }), status: 400, code: 'INVALID_QUERY' },
  { name: '29 February of a common year', request: () => ({ method: 'GET', url: '/v2/products?created_at[gt]=2021-02-29T00:00:00Z' }), status: 400, code: 'INVALID_QUERY' },
  { name: '29 February of a leap year', request: () => ({ method: 'GET', url: '/v2/products?created_at[gt]=2020-02-29T23:59:59.999Z&limit=1' }), status: 200 },
  { name: 'hour 24', request: () => ({ method: 'GET', url: '/v2/products?created_at[gt]=2020-01-01T24:00:00Z' }), status: 400, code: 'INVALID_QUERY' },
  { name: 'a leap second', request: () => ({ method: 'GET', url: '/v2/products?created_at[gt]=2016-12-31T23:59:60Z' }), status: 400, code: 'INVALID_QUERY' },
  { name: 'an offset of +24:00', request: () => ({ method: 'GET', url: '/v2/products?created_at[gt]=2020-01-01T00:00:00%2B24:00' }), status: 400, code: 'INVALID_QUERY' },
  { name: 'year 10000', request: () => ({ method: 'GET', url: '/v2/products?created_at[gt]=%2B010000-01-01T00:00:00Z' }), status: 400, code: 'INVALID_QUERY' },
  { name: 'the earliest instant', request: () => ({ method: 'GET', url: '/v2/products?created_at[gt]=0001-01-01T00:00:00Z&limit=1' }), status: 200 },
  { name: 'the latest instant', request: () => ({ method: 'GET', url: '/v2/products?created_at[lt]=9999-12-31T23:59:59.999Z&limit=1' }), status: 200 },
  {
    name: 'an offset that moves before year 1',
    request: () => ({ method: 'GET', url: '/v2/products?created_at[gt]=0001-01-01T00:00:00%2B01:00' }),
    status: 400,
    code: 'INVALID_QUERY',
  },
  { name: 'a Unix time', request: () => ({ method: 'GET', url: '/v2/products?created_at[gt]=1700000000' }), status: 400, code: 'INVALID_QUERY' },

  // Cursors (13.6).
  { name: 'a users cursor on products', request: (f) => ({ method: 'GET', url: `/v2/products?cursor=${encodeURIComponent(f.usersCursor)}` }), status: 400, code: 'INVALID_QUERY' },
  {
    name: 'a cursor of one order’s items on another order',
    request: (f) => ({ method: 'GET', url: `/v2/orders/${f.orderB}/order-items?cursor=${encodeURIComponent(f.itemsCursorA)}` }),
    status: 400,
    code: 'INVALID_QUERY',
  },
  {
    name: 'the same cursor where it belongs',
    request: (f) => ({ method: 'GET', url: `/v2/orders/${f.orderA}/order-items?cursor=${encodeURIComponent(f.itemsCursorA)}` }),
    status: 200,
  },
  {
    name: 'a page token with another sort',
    request: (f) => ({ method: 'GET', url: `/v2/products?sort=-name&page_token=${encodeURIComponent(f.nameSortToken)}` }),
    status: 400,
    code: 'INVALID_QUERY',
  },
  { name: 'a forged cursor', request: () => ({ method: 'GET', url: '/v2/products?cursor=eyJ2IjoxfQ.AAAAAAAAAAAAAAAAAAAAAA' }), status: 400, code: 'INVALID_QUERY' },

  // Charsets and encodings (13.7).
  {
    name: 'charset=utf-16',
    request: () => ({ method: 'POST', url: '/v2/products', headers: { 'content-type': 'application/json; charset=utf-16' }, body: JSON.stringify(product({})) }),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'charset=iso-8859-1',
    request: () => ({ method: 'POST', url: '/v2/products', headers: { 'content-type': 'application/json; charset=iso-8859-1' }, body: JSON.stringify(product({})) }),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'charset="UTF-8"',
    request: () => ({
      method: 'POST',
      url: '/v2/products',
      headers: { 'content-type': 'application/json; charset="UTF-8"' },
      body: JSON.stringify(product({ name: 'Quoted charset' })),
    }),
    status: 201,
    stored: readBack('name'),
    expect: 'Quoted charset',
  },
  {
    name: 'a gzip body',
    request: () => ({ method: 'POST', url: '/v2/products', headers: { ...json, 'content-encoding': 'gzip' }, body: gzipSync(JSON.stringify(product({}))) }),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    check: (res) => assert.equal(res.headers['accept-encoding'], 'identity'),
  },
  {
    name: 'Content-Encoding: gzip on a plain body',
    request: () => ({ method: 'POST', url: '/v2/products', headers: { ...json, 'content-encoding': 'gzip' }, body: JSON.stringify(product({})) }),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'Content-Encoding: identity',
    request: () => ({ method: 'POST', url: '/v2/products', headers: { ...json, 'content-encoding': 'identity' }, body: JSON.stringify(product({ name: 'Identity' })) }),
    status: 201,
    stored: readBack('name'),
    expect: 'Identity',
  },
  {
    name: 'invalid UTF-8 in a JSON string',
    request: () => ({
      method: 'POST',
      url: '/v2/products',
      headers: json,
      body: Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xc3, 0x28]), Buffer.from('","price":{"amount":1,"currency":"EUR"}}')]),
    }),
    status: 400,
    code: 'INVALID_JSON',
  },
  {
    name: 'an overlong UTF-8 encoding',
    request: () => ({
      method: 'POST',
      url: '/v2/products',
      headers: json,
      body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('","price":{"amount":1,"currency":"EUR"}}')]),
    }),
    status: 400,
    code: 'INVALID_JSON',
  },
  {
    name: 'invalid UTF-8 percent-encoding in a form',
    request: () => ({ method: 'POST', url: '/v2/sessions', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=%FF%40example.com&password=whatever' }),
    status: 400,
    code: 'BAD_REQUEST',
  },

  // Bounded errors (13.8).
  {
    name: '50,000 unknown keys',
    request: () => ({ method: 'POST', url: '/v2/products', headers: json, body: JSON.stringify(Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 1]))) }),
    status: 422,
    code: 'VALIDATION_ERROR',
    check: (res) => {
      assert.equal(res.body.error.details.length, 100);
      assert.ok(res.body.error.details_omitted >= 49_900, String(res.body.error.details_omitted));
      assert.ok(res.text.length < 20_000, `${res.text.length} bytes`);
    },
  },
];

async function send(server: TestServer, req: Request): Promise<Response> {
  const headers: Record<string, string> = { 'x-api-key': ADMIN_KEY, ...req.headers };
  if (req.url.startsWith('/v2/sessions') || req.url.startsWith('/oauth')) delete headers['x-api-key'];
  let payload: string | Buffer | undefined;
  if (typeof req.body === 'string' || Buffer.isBuffer(req.body)) payload = req.body;
  else if (req.body !== undefined) {
    payload = JSON.stringify(req.body);
    headers['content-type'] ??= 'application/json';
  }
  return fromInject(await server.app.inject({ method: req.method as 'GET', url: req.url, headers, ...(payload !== undefined ? { payload } : {}) }));
}

interface Outcome {
  status: number;
  code: string | undefined;
  stored: unknown;
}

const outcomes = new Map<string, Map<string, Outcome>>();

for (const mode of MODES) {
  describe(`hostile inputs on ${mode.endsWith('postgres') ? 'PostgreSQL' : 'SQLite'}`, () => {
    const f = {} as Fixture;
    const mine = new Map<string, Outcome>();
    outcomes.set(mode, mine);
    before(async () => {
      f.server = await startServer(mode);
      f.productId = (await createProduct(f.server, { price: { amount: 250, currency: 'EUR' }, status: 'active' })).id;
      f.customerKey = (await createCustomer(f.server, `hostile-${randomUUID()}@example.com`)).key;
      await createCustomer(f.server, `hostile-${randomUUID()}@example.com`);
      f.orderA = (await f.server.request('POST', '/v2/orders', { body: {} })).body.id;
      f.orderB = (await f.server.request('POST', '/v2/orders', { body: {} })).body.id;
      for (let i = 0; i < 2; i++) await f.server.request('POST', `/v2/orders/${f.orderA}/order-items`, { body: { product_id: f.productId, quantity: 1 } });
      await createProduct(f.server, { name: 'Another' });
      f.usersCursor = (await f.server.request('GET', '/v2/users?limit=1')).body.pagination.next_cursor;
      f.itemsCursorA = (await f.server.request('GET', `/v2/orders/${f.orderA}/order-items?limit=1`)).body.pagination.next_cursor;
      f.nameSortToken = (await f.server.request('GET', '/v2/products?sort=name&page_size=1')).body.next_page_token;
      assert.ok(f.usersCursor && f.itemsCursorA && f.nameSortToken, 'the fixture has second pages');
    });
    after(async () => f.server?.close());

    for (const c of CASES) {
      it(`${c.name}: ${c.status}${c.code ? ` ${c.code}` : ''}`, async () => {
        const res = await send(f.server, c.request(f));
        const code = res.body?.error?.code ?? (typeof res.body?.error === 'string' ? res.body.error : undefined);
        assert.equal(res.status, c.status, res.text.slice(0, 500));
        assert.equal(code, c.code);
        c.check?.(res);
        const stored = c.stored ? await c.stored(f, res) : undefined;
        if (c.stored) assert.deepEqual(stored, c.expect);
        mine.set(c.name, { status: res.status, code, stored });
      });
    }

    it('an order total at MAX_AMOUNT takes no more: 422 naming quantity, and the total is unchanged', async () => {
      const dear = (await createProduct(f.server, { price: { amount: MAX_AMOUNT, currency: 'EUR' }, status: 'active' })).id;
      const cheap = (await createProduct(f.server, { price: { amount: 1, currency: 'EUR' }, status: 'active' })).id;
      const order = (await f.server.request('POST', '/v2/orders', { body: {} })).body.id;
      assert.equal((await f.server.request('POST', `/v2/orders/${order}/order-items`, { body: { product_id: dear, quantity: 1 } })).status, 201);
      for (const body of [
        { product_id: cheap, quantity: 1 },
        { product_id: dear, quantity: 1000 },
      ]) {
        const res = await f.server.request('POST', `/v2/orders/${order}/order-items`, { body });
        assert.equal(res.status, 422, res.text);
        assert.equal(res.body.error.code, 'VALIDATION_ERROR');
        assert.equal(res.body.error.details[0].field, 'quantity');
      }
      const after = await f.server.request('GET', `/v2/orders/${order}`);
      assert.deepEqual(after.body.total, { amount: MAX_AMOUNT, currency: 'EUR' });
      assert.equal((await f.server.request('GET', `/v2/orders/${order}/order-items?offset=0`)).body.pagination.total, 1);
    });
  });
}

describe('both stores answered every hostile input alike', { skip: MODES.length < 2 ? 'PostgreSQL is not configured' : false }, () => {
  it('same status, error code and stored value for every case', () => {
    const [a, b] = MODES.map((m) => outcomes.get(m)!);
    assert.equal(a!.size, CASES.length, 'every SQLite case ran');
    for (const c of CASES) assert.deepEqual(b!.get(c.name), a!.get(c.name), c.name);
  });
});
