// canon-client credentials (issue 28.3, DESIGN §8): OAuth client credentials (one token request for concurrent calls, renewal before expiry, a refused token replaced once), cookie sessions (one login, CSRF, re-login after eviction, a stale CSRF token), browser sessions, bearer tokens, API keys, the cookie jar.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, startServer, type Mode, type TestServer } from '../support/harness.js';
import { PG_URL } from '../support/pg.js';
import { errorBody, faultProxy } from './proxy.js';
import type { CanonClient } from '../../packages/client/dist/index.js';
import { canon, recordingFetch } from './support.js';
import type * as Jar from '../../packages/client/dist/credentials/cookie-jar.js';
import type * as Credentials from '../../packages/client/dist/credentials/index.js';
import type * as TransportModule from '../../packages/client/dist/transport.js';

const { createClient, CanonError } = canon;
const jar: typeof Jar = await import(new URL('../../../packages/client/dist/credentials/cookie-jar.js', import.meta.url).href);
const credentials: typeof Credentials = await import(new URL('../../../packages/client/dist/credentials/index.js', import.meta.url).href);
const transports: typeof TransportModule = await import(new URL('../../../packages/client/dist/transport.js', import.meta.url).href);
const MODES: Mode[] = ['listen', ...(PG_URL ? (['listen/postgres'] as const) : [])];
const PASSWORD = 'long enough password';

for (const mode of MODES) {
  describe(`canon-client credentials (${mode})`, () => {
    let server: TestServer;
    let productId: string;
    let admin: CanonClient;
    const oauthClient = async (name: string) => admin.oauthClients.create({ name, scopes: ['products:read'] });
    before(async () => {
      server = await startServer(mode);
      admin = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY });
      productId = (await admin.products.create({ name: 'Readable', price: { amount: 100, currency: 'EUR' } })).id!;
    });
    after(async () => server.close());

    it('OAuth: twenty concurrent first calls make one token request; the token is reused while fresh', async () => {
      const oc = await oauthClient('concurrent');
      const recorder = recordingFetch();
      const c = createClient({ baseUrl: server.baseUrl!, oauth: { clientId: oc.client_id!, clientSecret: oc.client_secret!, scope: ['products:read'] }, fetch: recorder.fetch });
      const got = await Promise.all(Array.from({ length: 20 }, () => c.products.get(productId)));
      assert.ok(got.every((p) => p.id === productId));
      const tokenRequests = recorder.sent.filter((s) => s.url.endsWith('/oauth/token'));
      assert.equal(tokenRequests.length, 1);
      assert.match(tokenRequests[0]!.headers.authorization ?? '', /^Basic /, 'client authentication by HTTP Basic (RFC 6749 §2.3.1)');
      assert.equal(tokenRequests[0]!.body, 'grant_type=client_credentials&scope=products%3Aread');
      assert.equal(tokenRequests[0]!.headers['idempotency-key'], undefined);
      const bearers = new Set(recorder.sent.filter((s) => !s.url.endsWith('/oauth/token')).map((s) => s.headers.authorization));
      assert.equal(bearers.size, 1);
      assert.match([...bearers][0]!, /^Bearer ey/);
      await c.products.get(productId);
      assert.equal(recorder.sent.filter((s) => s.url.endsWith('/oauth/token')).length, 1);
    });

    it('OAuth: a token is renewed before it expires, once for every concurrent call', async () => {
      const oc = await oauthClient('renewing');
      // Tokens that say they live 2 s: renewed half-way (the margin is at most half the lifetime).
      const proxy = await faultProxy(server.baseUrl!, (req) => (req.url === '/oauth/token' ? { rewrite: (body) => ({ ...body, expires_in: 2 }) } : 'pass'));
      try {
        const recorder = recordingFetch();
        const c = createClient({ baseUrl: proxy.url, oauth: { clientId: oc.client_id!, clientSecret: oc.client_secret! }, fetch: recorder.fetch });
        await Promise.all(Array.from({ length: 5 }, () => c.products.get(productId)));
        const first = recorder.sent.at(-1)!.headers.authorization;
        await new Promise((resolve) => setTimeout(resolve, 1100));
        await Promise.all(Array.from({ length: 5 }, () => c.products.get(productId)));
        assert.equal(recorder.sent.filter((s) => s.url.endsWith('/oauth/token')).length, 2, 'one renewal for five calls');
        assert.notEqual(recorder.sent.at(-1)!.headers.authorization, first, 'the later calls carry the new token');
      } finally {
        await proxy.close();
      }
    });

    it('OAuth: a 401 drops the token and the call is sent once more with a new one; a deleted client gets invalid_client', async () => {
      const oc = await oauthClient('refused');
      let refusals = 0;
      const proxy = await faultProxy(server.baseUrl!, (req) =>
        req.url!.startsWith('/v2/products/') && refusals++ === 0
          ? { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' }, body: errorBody('UNAUTHENTICATED') }
          : 'pass',
      );
      try {
        const recorder = recordingFetch();
        const c = createClient({ baseUrl: proxy.url, oauth: { clientId: oc.client_id!, clientSecret: oc.client_secret! }, fetch: recorder.fetch });
        assert.equal((await c.products.get(productId)).id, productId);
        assert.equal(recorder.sent.filter((s) => s.url.endsWith('/oauth/token')).length, 2);
        await admin.oauthClients.delete(oc.id!);
        await assert.rejects(c.products.get(productId), (err: unknown) => {
          assert.ok(err instanceof CanonError);
          assert.equal(err.status, 401);
          assert.equal(err.code, 'invalid_client', 'the token endpoint’s RFC 6749 §5.2 code');
          return true;
        });
      } finally {
        await proxy.close();
      }
    });

    it('a bearer token (a string or a function) and an API key go in the headers the server reads', async () => {
      const oc = await oauthClient('bearer');
      const token = await fetch(`${server.baseUrl!}/oauth/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${btoa(`${oc.client_id}:${oc.client_secret}`)}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      }).then(async (r) => ((await r.json()) as { access_token: string }).access_token);
      let asked = 0;
      for (const given of [token, () => (asked++, token)]) {
        const c = createClient({ baseUrl: server.baseUrl!, token: given });
        assert.equal((await c.products.get(productId)).id, productId);
      }
      assert.equal(asked, 1);
      const recorder = recordingFetch();
      await createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY, fetch: recorder.fetch }).products.get(productId);
      assert.equal(recorder.sent[0]!.headers['x-api-key'], ADMIN_KEY);
      await assert.rejects(createClient({ baseUrl: server.baseUrl! }).products.get(productId), { name: 'CanonError', status: 401, code: 'UNAUTHENTICATED' });
      assert.throws(() => createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY, token }), { name: 'TypeError', message: /one credential, not apiKey and token/ });
    });

    it('a session: one login for concurrent first calls, writes carry the CSRF token, and an evicted session logs in again', async () => {
      const email = `session-${mode.replace('/', '-')}@example.com`;
      await admin.users.create({ email, full_name: 'Sam', password: PASSWORD });
      const recorder = recordingFetch();
      const s = createClient({ baseUrl: server.baseUrl!, session: { email, password: PASSWORD }, fetch: recorder.fetch });
      const logins = () => recorder.sent.filter((r) => r.method === 'POST' && r.url.endsWith('/v2/sessions')).length;
      await Promise.all([s.orders.create({}), s.orders.create({}), s.products.get(productId)]);
      assert.equal(logins(), 1);
      const writes = recorder.sent.filter((r) => r.method === 'POST' && r.url.endsWith('/v2/orders'));
      assert.equal(writes.length, 2);
      assert.ok(writes.every((w) => /^.{16,}$/.test(w.headers['x-csrf-token'] ?? '') && /canon_session=/.test(w.headers.cookie ?? '')));
      assert.equal(recorder.sent.find((r) => r.method === 'GET')!.headers['x-csrf-token'], undefined, 'reads carry no CSRF token');
      // Five more logins of the same user evict this session (at most 5 per user, DESIGN §8).
      for (let i = 0; i < 5; i++) await createClient({ baseUrl: server.baseUrl!, session: { email, password: PASSWORD } }).sessions.login();
      const mine = [];
      for await (const o of s.orders.list()) mine.push(o.id);
      assert.equal(mine.length, 2);
      assert.equal(logins(), 2, 'the 401 of the evicted session logged in again, once');
      const refused = recorder.sent.filter((r) => r.method === 'GET' && r.url.includes('/v2/orders'));
      assert.equal(refused.length, 2, 'the refused try and its repeat');
    });

    it('a session whose CSRF token is refused reads the current one and sends the write once more', async () => {
      const email = `csrf-${mode.replace('/', '-')}@example.com`;
      await admin.users.create({ email, full_name: 'Cee', password: PASSWORD });
      let refusals = 0;
      const proxy = await faultProxy(server.baseUrl!, (req) =>
        req.method === 'POST' && req.url === '/v2/orders' && refusals++ === 0 ? { status: 403, body: errorBody('CSRF_TOKEN_INVALID') } : 'pass',
      );
      try {
        const s = createClient({ baseUrl: proxy.url, session: { email, password: PASSWORD } });
        assert.equal((await s.orders.create({})).status, 'pending');
        assert.deepEqual(
          proxy.seen.map((r) => `${r.method} ${r.url}`),
          ['POST /v2/sessions', 'POST /v2/orders', 'GET /v2/sessions/current', 'POST /v2/orders'],
        );
      } finally {
        await proxy.close();
      }
    });
  });
}

describe('canon-client browser sessions and the cookie jar', () => {
  it('cookies: browser lets fetch carry the cookie (credentials: include), reads the CSRF token before the first write, keeps no Cookie header', async () => {
    const answers: Record<string, { status: number; body: unknown }> = {
      'GET /v2/sessions/current': { status: 200, body: { csrf_token: 'csrf-1', user: {}, expires_at: '', created_at: '', last_accessed: '' } },
      'GET /v2/products': { status: 200, body: { data: [], links: [] } },
      'POST /v2/orders': { status: 201, body: { id: 'o', links: [] } },
    };
    const fake: typeof fetch = async (input, init) => {
      const answer = answers[`${init?.method} ${new URL(String(input)).pathname}`]!;
      return new Response(JSON.stringify(answer.body), {
        status: answer.status,
        headers: { 'content-type': 'application/json', 'set-cookie': 'canon_session=x; Path=/; HttpOnly' },
      });
    };
    const recorder = recordingFetch(fake);
    const c = createClient({ baseUrl: 'https://shop.example', session: { cookies: 'browser' }, fetch: recorder.fetch });
    for await (const _ of c.products.list()) assert.fail('no products');
    await c.orders.create({});
    assert.deepEqual(
      recorder.sent.map((r) => `${r.method} ${new URL(r.url).pathname}`),
      ['GET /v2/products', 'GET /v2/sessions/current', 'POST /v2/orders'],
    );
    assert.ok(recorder.sent.every((r) => r.credentials === 'include' && r.headers.cookie === undefined));
    assert.equal(recorder.sent[2]!.headers['x-csrf-token'], 'csrf-1');
    assert.throws(() => createClient({ baseUrl: 'https://shop.example', session: { email: 'a@b.c' } }), /both an email and a password/);
  });

  it('requests made outside the transport (the event stream) get the client’s headers, the credential’s, and its fetch mode', async () => {
    const recorder = recordingFetch(async () => new Response('', { status: 200 }));
    const make = (options: Credentials.CredentialOptions) => {
      const t = new transports.Transport({
        baseUrl: 'https://api.test',
        fetch: recorder.fetch,
        retries: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0, maxElapsedMs: 0 },
        cache: undefined,
        headers: { 'user-agent': 'ua' },
        timeoutMs: 0,
      });
      t.credential = credentials.credentialOf(options, t, '/v2/sessions');
      return t;
    };
    const keyed = make({ apiKey: 'ck_k' });
    assert.deepEqual(await keyed.headersFor('GET', 'https://api.test/events'), { 'user-agent': 'ua', 'x-api-key': 'ck_k' });
    await keyed.fetch('https://api.test/events', { method: 'GET' });
    assert.equal(recorder.sent[0]!.credentials, undefined);
    assert.equal(recorder.sent[0]!.redirect, 'manual', 'no redirect followed: the key stays with the API');
    const browser = make({ session: { cookies: 'browser' } });
    assert.deepEqual(await browser.headersFor('GET', 'https://api.test/events'), { 'user-agent': 'ua' }, 'a GET needs no CSRF token, and the browser keeps the cookie');
    await browser.fetch('https://api.test/events', { method: 'GET' });
    assert.equal(recorder.sent[1]!.credentials, 'include');
  });

  it('the jar: Path, Secure, Max-Age and Expires as RFC 6265 says; longer paths first', () => {
    const j = new jar.CookieJar();
    const now = Date.parse('2026-11-21T10:00:00Z');
    j.store('http://api.test/v2/sessions', ['canon_session=s1; Path=/; HttpOnly; SameSite=Lax; Max-Age=60', '__Host-x=y; Secure; Path=/', 'deep=d; Path=/v2/orders'], now);
    assert.equal(j.header('http://api.test/v2/products', now), 'canon_session=s1', 'the Secure cookie from http is not kept');
    assert.equal(j.header('http://api.test/v2/orders/1', now), 'deep=d; canon_session=s1');
    assert.equal(j.header('http://api.test/v2/ordersx', now), 'canon_session=s1', 'a path matches at a segment boundary');
    assert.equal(j.header('http://api.test/v2/products', now + 61_000), undefined, 'expired after Max-Age');
    j.store('http://api.test/v2/sessions', ['canon_session=s2; Path=/; Expires=Sat, 21 Nov 2026 11:00:00 GMT'], now);
    assert.equal(j.header('http://api.test/', now), 'canon_session=s2');
    j.store('http://api.test/v2/sessions/current', ['canon_session=; Path=/; Max-Age=0'], now);
    assert.equal(j.header('http://api.test/', now), undefined, 'Max-Age=0 deletes');
    const secure = new jar.CookieJar();
    secure.store('https://api.test/v2/sessions', ['__Host-canon_session=h; Secure; Path=/'], now);
    assert.equal(secure.header('https://api.test/v2/orders', now), '__Host-canon_session=h');
    assert.equal(secure.header('http://api.test/v2/orders', now), undefined, 'a Secure cookie goes over https only');
  });
});
