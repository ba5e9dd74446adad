// Idempotency across processes and crashes: one object per key over two processes; a SIGKILL mid-flight loses nothing and doubles nothing.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ADMIN_KEY } from '../support/harness.js';
import { createTestDatabase, PG_SKIP, PG_URL, type TestDatabase } from '../support/pg.js';
import { startCanon, type CanonProcess } from '../support/processes.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function post(base: string, key: string, body: unknown): Promise<{ status: number; replayed: boolean; body: Json }> {
  const res = await fetch(`${base}/v2/products`, {
    method: 'POST',
    headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return { status: res.status, replayed: res.headers.get('idempotent-replayed') === 'true', body: (await res.json()) as Json };
}

async function allNames(base: string): Promise<string[]> {
  const names: string[] = [];
  for (let offset = 0; offset < 10_000; offset += 100) {
    const res = await fetch(`${base}/v2/products?offset=${offset}&limit=100`, { headers: { 'x-api-key': ADMIN_KEY } });
    const page = (await res.json()) as Json;
    names.push(...page.data.map((p: Json) => p.name));
    if (offset + 100 >= page.pagination.total) break;
  }
  return names;
}

const env = (db: string) => ({ DATABASE_URL: db, CANON_ADMIN_API_KEY: ADMIN_KEY, CANON_SECRET: 'shared-secret' });

describe('idempotency over two processes on PostgreSQL', { skip: PG_SKIP }, () => {
  let db: TestDatabase;
  const procs: CanonProcess[] = [];
  after(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await db?.drop();
  });

  it('50 concurrent POSTs with one key over both processes: one object, one event', async () => {
    db = await createTestDatabase();
    procs.push(...(await Promise.all([startCanon(env(db.url)), startCanon(env(db.url))])));
    const key = randomUUID();
    const name = `spread-${key}`;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => post(procs[i % 2]!.url, key, { name, price: { amount: 1, currency: 'EUR' } })));
    const fresh = results.filter((r) => r.status === 201 && !r.replayed);
    assert.equal(fresh.length, 1, results.map((r) => `${r.status}${r.replayed ? 'r' : ''}`).join(','));
    for (const r of results)
      assert.ok((r.status === 201 && (r === fresh[0] || (r.replayed && r.body.id === fresh[0]!.body.id))) || (r.status === 409 && r.body.error.code === 'IDEMPOTENCY_KEY_IN_USE'));
    assert.equal((await allNames(procs[0]!.url)).filter((n) => n === name).length, 1);
  });
});

/** Fires one request per key, kills the process with SIGKILL while they are in flight, restarts it and retries every key. */
async function crashAndRetry(databaseUrl: string, report: (message: string) => void): Promise<void> {
  const first = await startCanon(env(databaseUrl));
  const keys = Array.from({ length: 200 }, () => randomUUID());
  let answered = 0;
  const inFlight = keys.map((k) =>
    post(first.url, k, { name: `crash-${k}`, price: { amount: 1, currency: 'EUR' } }).then(
      () => answered++,
      () => undefined,
    ),
  );
  // Kill once some requests have been answered and the rest are still in flight (bounded wait).
  for (let i = 0; i < 500 && answered < 30; i++) await new Promise((r) => setTimeout(r, 2));
  const answeredBeforeKill = answered;
  first.child.kill('SIGKILL');
  await Promise.all(inFlight);
  report(`${answeredBeforeKill} of ${keys.length} requests had been answered when the process was killed`);
  assert.ok(answeredBeforeKill > 0 && answeredBeforeKill < keys.length, 'the kill came mid-flight');
  await first.stop();
  const second = await startCanon(env(databaseUrl));
  try {
    for (const k of keys) {
      let done = false;
      for (let attempt = 0; attempt < 20 && !done; attempt++) {
        const r = await post(second.url, k, { name: `crash-${k}`, price: { amount: 1, currency: 'EUR' } });
        done = r.status === 201;
        if (!done) await new Promise((res) => setTimeout(res, 50));
      }
      assert.ok(done, `key ${k} never yielded its object`);
    }
    const names = await allNames(second.url);
    for (const k of keys) assert.equal(names.filter((n) => n === `crash-${k}`).length, 1, `crash-${k}`);
  } finally {
    await second.stop();
  }
}

describe('idempotency across a crash', () => {
  const dir = mkdtempSync(join(tmpdir(), 'canon-crash-'));
  const dbs: TestDatabase[] = [];
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    for (const d of dbs) await d.drop();
  });

  it('SQLite file: every key yields its object exactly once after a SIGKILL', async (t) => {
    await crashAndRetry(`sqlite:${join(dir, 'crash.db')}`, (m) => t.diagnostic(m));
  });

  it('PostgreSQL: every key yields its object exactly once after a SIGKILL', { skip: PG_SKIP }, async (t) => {
    assert.ok(PG_URL);
    const db = await createTestDatabase();
    dbs.push(db);
    await crashAndRetry(db.url, (m) => t.diagnostic(m));
  });
});
