// Issue 12.4: a credential change made through one process is refused by another from the very next request: one SQLite file, and PostgreSQL without Redis.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY } from '../support/harness.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../support/pg.js';
import { startCanon, type CanonProcess } from '../support/processes.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const PASSWORD = 'long enough password';

async function call(
  base: string,
  method: string,
  path: string,
  options: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: Json }> {
  const key = options.key === undefined ? ADMIN_KEY : options.key;
  const body = options.body;
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(key ? { 'x-api-key': key } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Json) : {} };
}

/** Every credential change of issue 12.4, made through `a` while `b` holds the credential warm in its caches. */
function revocationSuite(label: string, skip: string | false, start: () => Promise<{ a: CanonProcess; b: CanonProcess; cleanup: () => Promise<void> }>): void {
  describe(`credential changes reach the other process at once (${label})`, { skip }, () => {
    let a: CanonProcess;
    let b: CanonProcess;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ a, b, cleanup } = await start());
    });
    after(async () => cleanup?.());

    const newUser = async (role: 'admin' | 'customer'): Promise<{ id: string; email: string; key: string; keyId: string }> => {
      const email = `rev-${randomUUID()}@example.com`;
      const user = await call(a.url, 'POST', '/v2/users', { body: { email, full_name: 'Revocable', password: PASSWORD, role } });
      assert.equal(user.status, 201);
      const key = await call(a.url, 'POST', '/v2/api-keys', { body: { name: 'revocable', user_id: user.body.id } });
      assert.equal(key.status, 201);
      return { id: user.body.id, email, key: key.body.key, keyId: key.body.id };
    };
    /** Uses the key on `b` twice, so `b` has it cached. */
    const warm = async (key: string): Promise<void> => {
      for (let i = 0; i < 2; i++) assert.equal((await call(b.url, 'GET', '/v2/products?limit=1', { key })).status, 200);
    };

    it('a revoked (deleted) key', async () => {
      for (let round = 0; round < 5; round++) {
        const u = await newUser('customer');
        await warm(u.key);
        assert.equal((await call(a.url, 'DELETE', `/v2/api-keys/${u.keyId}`)).status, 204);
        const after = await call(b.url, 'GET', '/v2/products?limit=1', { key: u.key });
        assert.equal(after.status, 401, `round ${round}`);
        assert.equal(after.body.error.code, 'UNAUTHENTICATED');
      }
    });

    it('a demoted admin cannot mint an admin key on the other process', async () => {
      for (let round = 0; round < 5; round++) {
        const u = await newUser('admin');
        await warm(u.key);
        assert.equal((await call(b.url, 'GET', '/v2/api-keys?limit=1', { key: u.key })).status, 200, 'an admin while it is one');
        assert.equal((await call(a.url, 'PATCH', `/v2/users/${u.id}`, { body: { role: 'customer' } })).status, 200);
        const minted = await call(b.url, 'POST', '/v2/api-keys', { key: u.key, body: { name: 'escalation' } });
        assert.equal(minted.status, 403, `round ${round}: ${JSON.stringify(minted.body)}`);
        assert.equal(minted.body.error.code, 'FORBIDDEN');
      }
    });

    it('a key whose scopes were narrowed', async () => {
      const u = await newUser('customer');
      await warm(u.key);
      assert.equal((await call(a.url, 'PATCH', `/v2/api-keys/${u.keyId}`, { body: { scopes: ['orders:read'] } })).status, 200);
      const res = await call(b.url, 'GET', '/v2/products?limit=1', { key: u.key });
      assert.equal(res.status, 403);
      assert.equal(res.body.error.code, 'INSUFFICIENT_SCOPE');
    });

    it('a deleted user: its keys and its sessions', async () => {
      const u = await newUser('customer');
      await warm(u.key);
      const login = await call(b.url, 'POST', '/v2/sessions', { key: null, body: { email: u.email, password: PASSWORD } });
      assert.equal(login.status, 201);
      const cookie = login.headers
        .getSetCookie()
        .find((c) => c.startsWith('canon_session='))!
        .split(';')[0]!;
      assert.equal((await call(b.url, 'GET', '/v2/sessions/current', { key: null, headers: { cookie } })).status, 200);
      assert.equal((await call(a.url, 'DELETE', `/v2/users/${u.id}`)).status, 204);
      assert.equal((await call(b.url, 'GET', '/v2/products?limit=1', { key: u.key })).status, 401);
      assert.equal((await call(b.url, 'GET', '/v2/sessions/current', { key: null, headers: { cookie } })).status, 401);
    });

    it('a password change ends the user’s sessions on every process', async () => {
      const u = await newUser('customer');
      const login = await call(b.url, 'POST', '/v2/sessions', { key: null, body: { email: u.email, password: PASSWORD } });
      const cookie = login.headers
        .getSetCookie()
        .find((c) => c.startsWith('canon_session='))!
        .split(';')[0]!;
      assert.equal((await call(b.url, 'GET', '/v2/products?limit=1', { key: null, headers: { cookie } })).status, 200);
      assert.equal(
        (await call(a.url, 'PUT', `/v2/users/${u.id}/password`, { key: u.key, body: { current_password: PASSWORD, new_password: 'a brand new password' } })).status,
        204,
      );
      assert.equal((await call(b.url, 'GET', '/v2/products?limit=1', { key: null, headers: { cookie } })).status, 401);
      // The user's key is no session: it keeps working, re-read after the change.
      assert.equal((await call(b.url, 'GET', '/v2/products?limit=1', { key: u.key })).status, 200);
    });

    it('a deleted OAuth client: its bearer tokens, before they expire', async () => {
      const client = await call(a.url, 'POST', '/v2/oauth-clients', { body: { name: 'revocable client' } });
      const basic = Buffer.from(`${client.body.client_id}:${client.body.client_secret}`).toString('base64');
      const token = await fetch(`${a.url}/oauth/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
      const bearer = { authorization: `Bearer ${((await token.json()) as Json).access_token}` };
      for (let i = 0; i < 2; i++) assert.equal((await call(b.url, 'GET', '/v2/products?limit=1', { key: null, headers: bearer })).status, 200);
      assert.equal((await call(a.url, 'PATCH', `/v2/oauth-clients/${client.body.id}`, { body: { scopes: ['orders:read'] } })).status, 200);
      const narrowed = await call(b.url, 'GET', '/v2/products?limit=1', { key: null, headers: bearer });
      assert.equal(narrowed.status, 403, 'the unrestricted token now holds only what its client holds');
      assert.equal(narrowed.body.error.code, 'INSUFFICIENT_SCOPE');
      assert.equal((await call(b.url, 'GET', '/v2/orders?limit=1', { key: null, headers: bearer })).status, 200, 'what the client still holds');
      assert.equal((await call(a.url, 'DELETE', `/v2/oauth-clients/${client.body.id}`)).status, 204);
      const res = await call(b.url, 'GET', '/v2/orders?limit=1', { key: null, headers: bearer });
      assert.equal(res.status, 401);
      assert.match(res.headers.get('www-authenticate') ?? '', /invalid_token/);
    });
  });
}

revocationSuite('two processes on one SQLite file', false, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'canon-revoke-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'canon.db')}`, CANON_ADMIN_API_KEY: ADMIN_KEY, CANON_SECRET: 'shared-secret', CANON_PUBLIC_URL: 'http://canon.test' };
  // One after the other: the first creates the file and its tables.
  const a = await startCanon(env);
  const b = await startCanon(env);
  return {
    a,
    b,
    cleanup: async () => {
      await Promise.all([a.stop(), b.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

let db: TestDatabase | undefined;
revocationSuite('two processes on PostgreSQL, no Redis', PG_SKIP, async () => {
  db = await createTestDatabase();
  const env = { DATABASE_URL: db.url, CANON_ADMIN_API_KEY: ADMIN_KEY, CANON_SECRET: 'shared-secret', CANON_PUBLIC_URL: 'http://canon.test' };
  const [a, b] = await Promise.all([startCanon(env), startCanon(env)]);
  return {
    a,
    b,
    cleanup: async () => {
      await Promise.all([a.stop(), b.stop()]);
      await db?.drop();
    },
  };
});
