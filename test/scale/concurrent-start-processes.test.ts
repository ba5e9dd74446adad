// Several `canon serve` processes started at once on one fresh store: each starts, one admin key and one seed result.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { ADMIN_KEY } from '../support/harness.js';
import { createTestDatabase, PG_SKIP } from '../support/pg.js';
import { startCanon, type CanonProcess } from '../support/processes.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const PROCESSES = 4;

async function get(base: string, path: string, key: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
  return { status: res.status, body: (await res.json()) as Json };
}

/** Every admin key of that name, through the API (the admin's view of /v2/api-keys). */
async function keysNamed(base: string, key: string, name: string): Promise<Json[]> {
  const res = await get(base, '/v2/api-keys?limit=100', key);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.data as Json[]).filter((k) => k.name === name);
}

async function userEmails(base: string, key: string): Promise<string[]> {
  const res = await get(base, '/v2/users?limit=100', key);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.data as Json[]).map((u) => String(u.email)).sort();
}

function devKeyOf(p: CanonProcess): Promise<string> {
  return eventually(async () => /development admin API key: (\S+)/.exec(p.output())?.[1], 'the printed development key');
}

function concurrentStartSuite(label: string, skip: string | false, store: () => Promise<{ url: string; cleanup: () => Promise<void>; keyFile?: string }>): void {
  describe(`${PROCESSES} processes started at once on one fresh store (${label})`, { skip }, () => {
    const running: CanonProcess[] = [];
    const cleanups: (() => Promise<void>)[] = [];
    after(async () => {
      await Promise.all(running.map((p) => p.stop()));
      for (const c of cleanups) await c();
    });

    async function startAll(env: Record<string, string>): Promise<CanonProcess[]> {
      const started = await Promise.allSettled(Array.from({ length: PROCESSES }, () => startCanon(env)));
      for (const s of started) if (s.status === 'fulfilled') running.push(s.value);
      const failed = started.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
      assert.deepEqual(
        failed.map((f) => String(f.reason)),
        [],
        'every process starts',
      );
      return started.map((s) => (s as PromiseFulfilledResult<CanonProcess>).value);
    }

    it('with CANON_ADMIN_API_KEY and the demo seed: every process starts, one admin key, the seed once', async () => {
      const { url, cleanup } = await store();
      cleanups.push(cleanup);
      const procs = await startAll({ DATABASE_URL: url, CANON_ADMIN_API_KEY: ADMIN_KEY, CANON_SEED: '1' });
      for (const p of procs) assert.equal((await keysNamed(p.url, ADMIN_KEY, 'admin (CANON_ADMIN_API_KEY)')).length, 1);
      const seededBy = procs.filter((p) => p.output().includes('seeded demo data'));
      assert.equal(seededBy.length, 1, 'exactly one process seeds');
      const emails = await userEmails(procs[0]!.url, ADMIN_KEY);
      assert.deepEqual(emails, [...new Set(emails)], 'no user twice');
      assert.ok(emails.includes('ada@example.com'), emails.join());
      const products = await get(procs[0]!.url, '/v2/products?limit=100', ADMIN_KEY);
      const names = (products.body.data as Json[]).map((p) => String(p.name));
      assert.deepEqual(names.slice().sort(), [...new Set(names)].sort(), 'the seed ran once: no product twice');
    });

    it('in development without a key: all print one generated key, it works on each, and a restart keeps it', async () => {
      const { url, cleanup, keyFile } = await store();
      cleanups.push(cleanup);
      const env = { DATABASE_URL: url, CANON_ADMIN_API_KEY: '' };
      const procs = await startAll(env);
      const keys = await Promise.all(procs.map(devKeyOf));
      assert.equal(new Set(keys).size, 1, `one key for the deployment, printed: ${keys.join(' ')}`);
      const key = keys[0]!;
      for (const p of procs) assert.equal((await keysNamed(p.url, key, 'admin (development)')).length, 1, 'one development key stored');
      if (keyFile) assert.equal(readFileSync(keyFile, 'utf8'), `${key}\n`, 'the file beside the database holds the printed key');
      await procs[0]!.stop();
      const again = await startCanon(env);
      running.push(again);
      assert.equal(await devKeyOf(again), key, 'a restart prints the same key');
      assert.equal((await keysNamed(again.url, key, 'admin (development)')).length, 1, 'and stores no second one');
    });
  });
}

concurrentStartSuite('PostgreSQL', PG_SKIP, async () => {
  const db = await createTestDatabase();
  return { url: db.url, cleanup: () => db.drop() };
});

concurrentStartSuite('SQLite file', false, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'canon-start-'));
  return { url: `sqlite:${join(dir, 'canon.db')}`, keyFile: join(dir, '.dev-admin-key'), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});
