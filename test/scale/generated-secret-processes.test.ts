// Issue 13.1: without CANON_SECRET (development), the generated secret is kept in the database, so a restart after SIGKILL and a second process agree on it.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY } from '../support/harness.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../support/pg.js';
import { startCanon, type CanonProcess } from '../support/processes.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: Json }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': ADMIN_KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Json) : {} };
}

function kill(p: CanonProcess): Promise<void> {
  return new Promise((resolve) => {
    if (p.child.exitCode !== null || p.child.signalCode !== null) return resolve();
    p.child.once('exit', () => resolve());
    p.child.kill('SIGKILL');
  });
}

function restartSuite(label: string, skip: string | false, setup: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void>; dir?: string }>): void {
  describe(`the generated development secret survives SIGKILL and is shared (${label})`, { skip }, () => {
    let env: Record<string, string>;
    let cleanup: () => Promise<void>;
    let dir: string | undefined;
    const running: CanonProcess[] = [];
    before(async () => {
      ({ env, cleanup, dir } = await setup());
    });
    after(async () => {
      await Promise.all(running.map((p) => p.stop()));
      await cleanup?.();
    });

    it('a keyed retry replays, an old cursor pages on, and /oauth/token signs, after a restart and on a second process', async () => {
      const first = await startCanon(env);
      running.push(first);
      const body = { name: 'Survivor', price: { amount: 1250, currency: 'EUR' }, status: 'active' };
      const created = await call(first.url, 'POST', '/v2/products', body, { 'idempotency-key': 'restart-1' });
      assert.equal(created.status, 201);
      await call(first.url, 'POST', '/v2/products', { ...body, name: 'Second' });
      const page = await call(first.url, 'GET', '/v2/products?limit=1');
      assert.equal(page.status, 200);
      const cursor = page.body.pagination.next_cursor as string;
      assert.ok(cursor, 'a first page with more behind it');
      const client = await call(first.url, 'POST', '/v2/oauth-clients', { name: 'survives restarts' });
      assert.equal(client.status, 201);
      await kill(first);

      const second = await startCanon(env);
      const third = await startCanon(env);
      running.push(second, third);
      for (const p of [second, third]) {
        const replay = await call(p.url, 'POST', '/v2/products', body, { 'idempotency-key': 'restart-1' });
        assert.equal(replay.status, 201, JSON.stringify(replay.body));
        assert.equal(replay.headers.get('idempotent-replayed'), 'true');
        assert.equal(replay.body.id, created.body.id);
        const next = await call(p.url, 'GET', `/v2/products?limit=1&cursor=${encodeURIComponent(cursor)}`);
        assert.equal(next.status, 200, JSON.stringify(next.body));
        assert.equal(next.body.data.length, 1);
        const basic = Buffer.from(`${client.body.client_id}:${client.body.client_secret}`).toString('base64');
        const token = await fetch(`${p.url}/oauth/token`, {
          method: 'POST',
          headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials',
        });
        assert.equal(token.status, 200, await token.clone().text());
        const bearer = { authorization: `Bearer ${((await token.json()) as Json).access_token}` };
        // A token signed by one process is accepted by the other: one signing key, sealed with one secret.
        const other = p === second ? third : second;
        const res = await fetch(`${other.url}/v2/products?limit=1`, { headers: bearer });
        assert.equal(res.status, 200);
      }
      if (dir) assert.equal(existsSync(join(dir, '.canon-secret')), false, 'the secret is in the database, not in a file');
    });
  });
}

let db: TestDatabase | undefined;
restartSuite('PostgreSQL', PG_SKIP, async () => {
  db = await createTestDatabase();
  return { env: { DATABASE_URL: db.url, CANON_ADMIN_API_KEY: ADMIN_KEY, CANON_SECRET: '', CANON_PUBLIC_URL: 'http://canon.test' }, cleanup: async () => db?.drop() };
});

restartSuite('SQLite file', false, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'canon-secret-'));
  return {
    dir,
    env: { DATABASE_URL: `sqlite:${join(dir, 'canon.db')}`, CANON_ADMIN_API_KEY: ADMIN_KEY, CANON_SECRET: '', CANON_PUBLIC_URL: 'http://canon.test' },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
