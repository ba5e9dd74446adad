// Cookie sessions, each rule of DESIGN §8 in its own test, with a real cookie jar; on every store and transport.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCustomer, errorShape, MODES, startServer, type TestServer } from '../../support/harness.js';
import { Browser } from './browser.js';

const PASSWORD = 'long enough password';
const COOKIE = /^canon_session=([A-Za-z0-9_-]{43}); Max-Age=1800; Path=\/; HttpOnly; SameSite=Lax$/;
/** The device cookie of docs/security.md (login throttling), set at every login beside the session. */
const DEVICE_COOKIE = /^canon_device=[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}; Max-Age=15552000; Path=\/; HttpOnly; SameSite=Strict$/;

for (const mode of MODES) {
  describe(`sessions (${mode})`, () => {
    let server: TestServer;
    let customer: { userId: string; key: string };
    const email = `sess-${mode.replace('/', '-')}@example.com`;
    before(async () => {
      server = await startServer(mode);
      customer = await createCustomer(server, email);
    });
    after(async () => server.close());

    it('logs in with JSON: 201, the exact cookie attributes, the user without secrets, a CSRF token', async () => {
      const b = new Browser(server);
      const res = await b.login(email, PASSWORD);
      assert.equal(res.status, 201, res.text);
      assert.equal(res.setCookies.length, 2);
      assert.match(res.setCookies[0]!, COOKIE);
      assert.match(res.setCookies[1]!, DEVICE_COOKIE);
      assert.equal(res.headers.location, '/v2/sessions/current');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.body.user.id, customer.userId);
      assert.equal(res.body.user.password, undefined);
      assert.equal(res.body.user.password_hash, undefined);
      assert.match(res.body.csrf_token, /^[A-Za-z0-9_-]{43}$/);
      assert.ok(Date.parse(res.body.expires_at) > Date.now());
      const me = await b.request('GET', '/v2/sessions/current');
      assert.equal(me.status, 200);
      assert.equal(me.body.user.email, email);
      assert.equal((await b.request('GET', '/v2/products')).status, 200);
    });

    it('logs in with an HTML form', async () => {
      const b = new Browser(server);
      const res = await b.request('POST', '/v2/sessions', {
        body: `email=${encodeURIComponent(email)}&password=${encodeURIComponent(PASSWORD)}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(res.status, 201, res.text);
    });

    it('refuses a wrong password and an unknown email alike', async () => {
      for (const [e, p] of [
        [email, 'wrong password'],
        ['nobody@example.com', PASSWORD],
      ] as const) {
        const res = await new Browser(server).login(e, p);
        assert.equal(res.status, 401);
        assert.equal(errorShape(res).code, 'UNAUTHENTICATED');
        assert.equal(res.setCookies.length, 0);
      }
      const bad = await new Browser(server).request('POST', '/v2/sessions', { body: { email } });
      assert.equal(bad.status, 422);
      assert.equal(errorShape(bad).details?.[0]?.field, 'password');
    });

    it('issues a new id at every login; a planted id is never authenticated', async () => {
      const planted = 'A'.repeat(43);
      const b = new Browser(server);
      await b.jar.setCookie(`canon_session=${planted}; Path=/`, server.baseUrl ?? 'http://127.0.0.1');
      const before = await b.request('GET', '/v2/sessions/current');
      assert.equal(before.status, 401);
      assert.match(before.setCookies[0] ?? '', /^canon_session=; Max-Age=0/);
      await b.jar.setCookie(`canon_session=${planted}; Path=/`, server.baseUrl ?? 'http://127.0.0.1');
      const login = await b.login(email, PASSWORD);
      const id = COOKIE.exec(login.setCookies[0]!)![1];
      assert.notEqual(id, planted);
      const again = await new Browser(server).login(email, PASSWORD);
      assert.notEqual(COOKIE.exec(again.setCookies[0]!)![1], id);
    });

    it('reads the id from the cookie only: a query string or a header is ignored', async () => {
      const login = await new Browser(server).login(email, PASSWORD);
      const id = COOKIE.exec(login.setCookies[0]!)![1]!;
      for (const [path, headers] of [
        [`/v2/sessions/current?canon_session=${id}`, {}],
        ['/v2/sessions/current', { 'x-session-id': id, 'x-canon-session': id, authorization: `Session ${id}` }],
      ] as const) {
        const res = await server.request('GET', path, { key: null, headers: { ...headers } });
        assert.equal(res.status, 401, path);
      }
    });

    it('logout deletes the session server-side and the cookie; replaying the old cookie is 401', async () => {
      const b = new Browser(server);
      const login = await b.login(email, PASSWORD);
      const stolen = `canon_session=${COOKIE.exec(login.setCookies[0]!)![1]}`;
      const out = await b.request('DELETE', '/v2/sessions/current', { headers: { 'x-csrf-token': login.body.csrf_token } });
      assert.equal(out.status, 204);
      assert.match(out.setCookies[0] ?? '', /^canon_session=; Max-Age=0; Path=\/; HttpOnly; SameSite=Lax$/);
      assert.equal(await b.cookie('canon_session'), undefined);
      const replay = await server.request('GET', '/v2/products', { key: null, headers: { cookie: stolen } });
      assert.equal(replay.status, 401);
      assert.equal(errorShape(replay).code, 'UNAUTHENTICATED');
    });

    it('a password change ends every session of the user', async () => {
      const who = await createCustomer(server, `pw-${mode.replace('/', '-')}@example.com`);
      void who;
      const a = new Browser(server);
      const b = new Browser(server);
      const la = await a.login(`pw-${mode.replace('/', '-')}@example.com`, PASSWORD);
      await b.login(`pw-${mode.replace('/', '-')}@example.com`, PASSWORD);
      const wrong = await a.request('PUT', `/v2/users/${who.userId}/password`, {
        headers: { 'x-csrf-token': la.body.csrf_token },
        body: { current_password: 'not it', new_password: 'a brand new password' },
      });
      assert.equal(wrong.status, 422);
      assert.equal(errorShape(wrong).details?.[0]?.field, 'current_password');
      const changed = await a.request('PUT', `/v2/users/${who.userId}/password`, {
        headers: { 'x-csrf-token': la.body.csrf_token },
        body: { current_password: PASSWORD, new_password: 'a brand new password' },
      });
      assert.equal(changed.status, 204, changed.text);
      assert.equal((await a.request('GET', '/v2/products')).status, 401);
      assert.equal((await b.request('GET', '/v2/products')).status, 401);
      assert.equal((await new Browser(server).login(`pw-${mode.replace('/', '-')}@example.com`, PASSWORD)).status, 401);
      assert.equal((await new Browser(server).login(`pw-${mode.replace('/', '-')}@example.com`, 'a brand new password')).status, 201);
    });

    it('the 6th login evicts the oldest session', async () => {
      const who = `six-${mode.replace('/', '-')}@example.com`;
      await createCustomer(server, who);
      const browsers: Browser[] = [];
      for (let i = 0; i < 6; i++) {
        const b = new Browser(server);
        assert.equal((await b.login(who, PASSWORD)).status, 201);
        browsers.push(b);
      }
      assert.equal((await browsers[0]!.request('GET', '/v2/sessions/current')).status, 401);
      for (const b of browsers.slice(1)) assert.equal((await b.request('GET', '/v2/sessions/current')).status, 200);
    });

    describe('CSRF (synchronizer, the default)', () => {
      let b: Browser;
      let token: string;
      before(async () => {
        b = new Browser(server);
        token = (await b.login(email, PASSWORD)).body.csrf_token;
      });

      it('a cookie-authenticated write without a token, or with a wrong one, is 403', async () => {
        const attempts: Array<Record<string, string>> = [{}, { 'x-csrf-token': 'wrong' }, { 'x-csrf-token': token + 'x' }, { 'x-csrf-token': '' }];
        for (const headers of attempts) {
          const res = await b.request('POST', '/v2/orders', { headers, body: {} });
          assert.equal(res.status, 403);
          assert.equal(errorShape(res).code, 'CSRF_TOKEN_INVALID');
        }
      });

      it('succeeds with the token in X-CSRF-Token or in the csrf_token form field', async () => {
        const header = await b.request('POST', '/v2/orders', { headers: { 'x-csrf-token': token }, body: {} });
        assert.equal(header.status, 201, header.text);
        assert.equal(header.body.user_id, customer.userId);
        const form = await b.request('POST', '/v2/orders', {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `csrf_token=${encodeURIComponent(token)}&currency=USD`,
        });
        assert.equal(form.status, 201, form.text);
        assert.equal(form.body.total.currency, 'USD');
      });

      it('reads need no token; key-authenticated writes need none and create no session', async () => {
        assert.equal((await b.request('GET', '/v2/orders')).status, 200);
        const keyed = await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
        assert.equal(keyed.status, 201);
        assert.equal(keyed.setCookies.length, 0);
      });
    });
  });
}

describe('CSRF double-submit mode', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('inject', { csrfMode: 'double-submit' });
    await createCustomer(server, 'double@example.com');
  });
  after(async () => server.close());

  it('sets a readable canon_csrf cookie at login and requires the header to equal it', async () => {
    const b = new Browser(server);
    const login = await b.login('double@example.com', PASSWORD);
    assert.equal(login.setCookies.length, 3);
    assert.match(login.setCookies[2]!, /^canon_device=/);
    assert.match(login.setCookies[1]!, /^canon_csrf=[A-Za-z0-9_-]{43}; Max-Age=1800; Path=\/; SameSite=Lax$/);
    const cookie = (await b.cookie('canon_csrf'))!;
    assert.equal(cookie, login.body.csrf_token);
    const missing = await b.request('POST', '/v2/orders', { body: {} });
    assert.equal(missing.status, 403);
    assert.equal(errorShape(missing).code, 'CSRF_TOKEN_INVALID');
    assert.equal((await b.request('POST', '/v2/orders', { headers: { 'x-csrf-token': 'other' }, body: {} })).status, 403);
    assert.equal((await b.request('POST', '/v2/orders', { headers: { 'x-csrf-token': cookie }, body: {} })).status, 201);
  });

  it('refuses a header that equals a planted cookie not issued to this session', async () => {
    const b = new Browser(server);
    await b.login('double@example.com', PASSWORD);
    await b.jar.setCookie('canon_csrf=planted-value; Path=/', 'http://127.0.0.1');
    const res = await b.request('POST', '/v2/orders', { headers: { 'x-csrf-token': 'planted-value' }, body: {} });
    assert.equal(res.status, 403);
  });

  it('logout clears both cookies', async () => {
    const b = new Browser(server);
    const login = await b.login('double@example.com', PASSWORD);
    const out = await b.request('DELETE', '/v2/sessions/current', { headers: { 'x-csrf-token': login.body.csrf_token } });
    assert.equal(out.status, 204);
    assert.deepEqual(
      out.setCookies.map((c) => c.split('=')[0]),
      ['canon_session', 'canon_csrf'],
    );
  });
});

describe('cookies in production', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('inject', { production: true, csrfMode: 'double-submit' });
    await createCustomer(server, 'prod@example.com');
  });
  after(async () => server.close());

  it('uses the __Host- names with Secure, Path=/ and no Domain', async () => {
    const res = await server.request('POST', '/v2/sessions', { key: null, body: { email: 'prod@example.com', password: PASSWORD } });
    assert.equal(res.status, 201);
    assert.match(res.setCookies[0]!, /^__Host-canon_session=[A-Za-z0-9_-]{43}; Max-Age=1800; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    assert.match(res.setCookies[1]!, /^__Host-canon_csrf=[A-Za-z0-9_-]{43}; Max-Age=1800; Path=\/; Secure; SameSite=Lax$/);
    assert.match(res.setCookies[2]!, /^__Host-canon_device=[A-Za-z0-9_.-]{66}; Max-Age=15552000; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
    for (const c of res.setCookies) assert.ok(!/domain=/i.test(c));
    const id = /^__Host-canon_session=([^;]+)/.exec(res.setCookies[0]!)![1];
    assert.equal((await server.request('GET', '/v2/sessions/current', { key: null, headers: { cookie: `__Host-canon_session=${id}` } })).status, 200);
    assert.equal(
      (await server.request('GET', '/v2/sessions/current', { key: null, headers: { cookie: `canon_session=${id}` } })).status,
      401,
      'the development name is not read in production',
    );
  });
});
