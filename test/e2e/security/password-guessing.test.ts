// Issue 12.3 and 12.9: every password check is throttled like a login, scrypt runs through a bounded queue, and strangers cannot lock an owner out.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Browser } from '../auth/browser.js';
import { createCustomer, errorShape, GENEROUS_LIMITS, MODES, startServer, type TestServer } from '../../support/harness.js';

const PASSWORD = 'long enough password';

for (const mode of MODES) {
  describe(`password checks are throttled wherever they happen (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode, {
        trustProxy: true,
        rateLimits: {
          ...GENEROUS_LIMITS,
          loginPerAccount: { limit: 3, periodSeconds: 600 },
          loginPerDevice: { limit: 3, periodSeconds: 600 },
          loginPerIp: { limit: 6, periodSeconds: 600 },
        },
      });
    });
    after(async () => server.close());

    const from = (ip: string, headers: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...headers });

    it('PUT /v2/users/{id}/password: a stolen key gets the login’s budget, then 429 even for the right password', async () => {
      const email = `victim-${randomUUID()}@example.com`;
      const victim = await createCustomer(server, email);
      const change = (current: string) =>
        server.request('PUT', `/v2/users/${victim.userId}/password`, {
          key: victim.key,
          headers: from('198.51.100.1'),
          body: { current_password: current, new_password: 'a brand new password' },
        });
      for (let i = 0; i < 3; i++) {
        const wrong = await change(`guess ${i}`);
        assert.equal(wrong.status, 422);
        assert.equal(errorShape(wrong).details?.[0]?.field, 'current_password');
      }
      const refused = await change(PASSWORD);
      assert.equal(refused.status, 429);
      assert.equal(errorShape(refused).code, 'RATE_LIMITED');
      assert.ok(Number(refused.headers['retry-after']) > 0);
      // The budget is the account's, shared with logins by untrusted clients: guessing here then at login gains nothing.
      const login = await server.request('POST', '/v2/sessions', { key: null, headers: from('198.51.100.2'), body: { email, password: PASSWORD } });
      assert.equal(login.status, 429);
      // An admin resetting the password checks no password, so it is not throttled.
      const reset = await server.request('PUT', `/v2/users/${victim.userId}/password`, { body: { new_password: 'reset by an admin' } });
      assert.equal(reset.status, 204);
    });

    it('password changes count against the client address too', async () => {
      const ip = '203.0.113.77';
      const users = await Promise.all([0, 1, 2].map(() => createCustomer(server, `ip-${randomUUID()}@example.com`)));
      const statuses: number[] = [];
      for (const u of users) {
        for (let i = 0; i < 2; i++) {
          statuses.push(
            (
              await server.request('PUT', `/v2/users/${u.userId}/password`, {
                key: u.key,
                headers: from(ip),
                body: { current_password: `wrong ${i}`, new_password: 'a brand new password' },
              })
            ).status,
          );
        }
      }
      const last = await server.request('PUT', `/v2/users/${users[0]!.userId}/password`, {
        key: users[0]!.key,
        headers: from(ip),
        body: { current_password: PASSWORD, new_password: 'a brand new password' },
      });
      assert.deepEqual(statuses, [422, 422, 422, 422, 422, 422]);
      assert.equal(last.status, 429, 'the address used its 6 checks');
    });

    it('a stranger who exhausts an account’s budget cannot lock out the owner’s browser (device cookie)', async () => {
      const email = `owner-${randomUUID()}@example.com`;
      await createCustomer(server, email);
      const owner = new Browser(server);
      // The owner logged in from this browser before: it holds a device cookie for the account.
      assert.equal((await owner.request('POST', '/v2/sessions', { headers: from('192.0.2.10'), body: { email, password: PASSWORD } })).status, 201);
      assert.ok(await owner.cookie('canon_device'));
      const stranger = (password: string, headers: Record<string, string> = {}) =>
        server.request('POST', '/v2/sessions', { key: null, headers: from('198.51.100.66', headers), body: { email, password } });
      // The owner's first login, before it had the cookie, used one of the account's three.
      for (let i = 0; i < 2; i++) assert.equal((await stranger(`guess ${i}`)).status, 401);
      const lockedOut = await stranger(PASSWORD);
      assert.equal(lockedOut.status, 429, 'untrusted clients are refused, even with the right password');
      assert.equal(errorShape(lockedOut).code, 'RATE_LIMITED');
      // The owner's browser still logs in, with the right password.
      const ownLogin = await owner.request('POST', '/v2/sessions', { headers: from('192.0.2.10'), body: { email, password: PASSWORD } });
      assert.equal(ownLogin.status, 201, ownLogin.text);
      // A forged device cookie, or one issued for another account, is no better than none.
      const forged = `canon_device=${'A'.repeat(22)}.${'B'.repeat(43)}`;
      assert.equal((await stranger(PASSWORD, { cookie: forged })).status, 429);
      const otherEmail = `other-${randomUUID()}@example.com`;
      await createCustomer(server, otherEmail);
      const other = new Browser(server);
      assert.equal((await other.request('POST', '/v2/sessions', { headers: from('198.51.100.67'), body: { email: otherEmail, password: PASSWORD } })).status, 201);
      const borrowed = `canon_device=${await other.cookie('canon_device')}`;
      assert.equal((await stranger(PASSWORD, { cookie: borrowed })).status, 429, 'a cookie for another account does not count');
    });

    it('a device has a budget of its own: guessing from it stops it, not the other devices', async () => {
      const email = `device-${randomUUID()}@example.com`;
      await createCustomer(server, email);
      const laptop = new Browser(server);
      const phone = new Browser(server);
      for (const b of [laptop, phone]) assert.equal((await b.request('POST', '/v2/sessions', { headers: from('192.0.2.20'), body: { email, password: PASSWORD } })).status, 201);
      // Each successful login issued a new cookie: the laptop's third check (two logins before) is its last.
      for (let i = 0; i < 3; i++) await laptop.request('POST', '/v2/sessions', { headers: from('192.0.2.21'), body: { email, password: `guess ${i}` } });
      assert.equal((await laptop.request('POST', '/v2/sessions', { headers: from('192.0.2.21'), body: { email, password: PASSWORD } })).status, 429);
      assert.equal((await phone.request('POST', '/v2/sessions', { headers: from('192.0.2.22'), body: { email, password: PASSWORD } })).status, 201);
    });
  });
}

describe('scrypt runs through a bounded queue', () => {
  let server: TestServer;
  const emails: string[] = [];
  before(async () => {
    // A cost that takes milliseconds, so checks overlap; one at a time, two may wait.
    server = await startServer('inject', { passwordCost: { N: 2 ** 14, r: 8, p: 1 }, passwordWork: { concurrency: 1, maxQueue: 2 } });
    for (let i = 0; i < 8; i++) {
      const email = `queue-${i}-${randomUUID()}@example.com`;
      await createCustomer(server, email);
      emails.push(email);
    }
  });
  after(async () => server.close());

  it('never runs more than the bound at once; past the queue, 503 with Retry-After; other requests go on meanwhile', async () => {
    const passwords = server.runtime.passwords;
    const peakBefore = passwords.stats.peak;
    let floodDone = false;
    const flood = Promise.all(emails.map((email) => server.request('POST', '/v2/sessions', { key: null, body: { email, password: PASSWORD } }))).then((r) => {
      floodDone = true;
      return r;
    });
    // While password checks run and wait, a request that needs none is answered.
    const health = await server.request('GET', '/healthz', { key: null });
    assert.equal(health.status, 200);
    assert.equal(floodDone, false, 'answered while the flood was still in the queue');
    const results = await flood;
    const statuses = results.map((r) => r.status).sort();
    assert.ok(
      statuses.every((s) => s === 201 || s === 503),
      statuses.join(','),
    );
    assert.ok(statuses.includes(201));
    const refused = results.filter((r) => r.status === 503);
    assert.ok(refused.length >= 1, `some were refused: ${statuses.join(',')}`);
    for (const r of refused) {
      assert.equal(errorShape(r).code, 'SERVICE_UNAVAILABLE');
      assert.ok(Number(r.headers['retry-after']) >= 1);
    }
    assert.equal(Math.max(peakBefore, passwords.stats.peak), 1, 'one scrypt at a time');
    assert.equal(passwords.queued, 0);
  });
});
