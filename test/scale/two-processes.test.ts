// Two `canon serve` processes on one PostgreSQL (and Redis): one object seen by both, unique emails exact, events fanned out.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY } from '../support/harness.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../support/pg.js';
import { startCanon, type CanonProcess } from '../support/processes.js';
import { REDIS_URL, runPrefix } from '../support/redis.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: Json }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': ADMIN_KEY, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Json) : {} };
}

describe('two processes on one PostgreSQL', { skip: PG_SKIP }, () => {
  let db: TestDatabase;
  let a: CanonProcess;
  let b: CanonProcess;
  const prefix = runPrefix();
  before(async () => {
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, CANON_ADMIN_API_KEY: ADMIN_KEY, CANON_SECRET: 'shared-secret', CANON_REDIS_PREFIX: prefix, ...(REDIS_URL ? { REDIS_URL } : {}) };
    // Both start at once: migrations serialise on the advisory lock.
    [a, b] = await Promise.all([startCanon(env), startCanon(env)]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.drop();
  });

  it('creates through one, reads, updates and deletes through the other', async () => {
    const created = await call(a.url, 'POST', '/v2/products', { name: 'Shared', price: { amount: 500, currency: 'EUR' } });
    assert.equal(created.status, 201);
    const path = created.headers.get('location')!;
    const read = await call(b.url, 'GET', path);
    assert.equal(read.status, 200);
    assert.equal(read.body.name, 'Shared');
    const etag = read.headers.get('etag')!;
    const patched = await call(b.url, 'PATCH', path, { name: 'Renamed' }, { 'if-match': etag });
    assert.equal(patched.status, 200);
    assert.notEqual(patched.headers.get('etag'), etag);
    const again = await call(a.url, 'GET', path);
    assert.equal(again.body.name, 'Renamed');
    assert.equal(again.headers.get('etag'), patched.headers.get('etag'));
    const stale = await call(a.url, 'DELETE', path, undefined, { 'if-match': etag });
    assert.equal(stale.status, 412);
    assert.equal((await call(a.url, 'DELETE', path)).status, 204);
    assert.equal((await call(b.url, 'GET', path)).status, 404);
  });

  it('a page polled on one process shows, from the next request on, every write committed through the other (list cache stamped by the snapshot)', async () => {
    const tag = `poll-${Date.now()}`;
    // Archived and dear: no other test's page holds these.
    const made = await call(a.url, 'POST', '/v2/products', { name: `${tag} one`, price: { amount: 900_001, currency: 'EUR' }, status: 'archived' });
    assert.equal(made.status, 201);
    const page = `/v2/products?status=archived&sort=price.amount&limit=5`;
    const first = await call(a.url, 'GET', page);
    assert.equal(first.status, 200);
    // Twice, so the second is a cache hit if anything is cached.
    const etag = (await call(a.url, 'GET', page)).headers.get('etag')!;
    assert.equal(etag, first.headers.get('etag'));
    for (let round = 0; round < 5; round++) {
      const patched = await call(b.url, 'PATCH', `/v2/products/${made.body.id}`, { name: `${tag} round ${round}` });
      assert.equal(patched.status, 200);
      const seen = await call(a.url, 'GET', page);
      assert.equal(seen.body.data.find((p: Json) => p.id === made.body.id)?.name, `${tag} round ${round}`, `round ${round}`);
      assert.equal((await call(a.url, 'GET', page, undefined, { 'if-none-match': seen.headers.get('etag')! })).status, 304);
    }
    const cheaper = await call(b.url, 'POST', '/v2/products', { name: `${tag} zero`, price: { amount: 900_000, currency: 'EUR' }, status: 'archived' });
    assert.equal(cheaper.status, 201);
    assert.equal((await call(a.url, 'GET', page)).body.data[0].id, cheaper.body.id);
    assert.equal((await call(b.url, 'DELETE', `/v2/products/${cheaper.body.id}`)).status, 204);
    assert.notEqual((await call(a.url, 'GET', page)).body.data[0].id, cheaper.body.id);
  });

  it('20 concurrent creates of one email over both processes: one 201, nineteen 409', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(i % 2 ? a.url : b.url, 'POST', '/v2/users', { email: 'race@example.com', full_name: `Racer ${i}`, password: 'long enough password' }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, ...Array(19).fill(409)]);
    for (const r of results.filter((x) => x.status === 409)) assert.equal(r.body.error.code, 'CONFLICT');
  });

  it('cursors made by one process are accepted by the other', async () => {
    for (let i = 0; i < 5; i++) await call(a.url, 'POST', '/v2/products', { name: `P${i}`, price: { amount: i, currency: 'EUR' } });
    const first = await call(a.url, 'GET', '/v2/products?limit=2&sort=price.amount');
    const next = await call(b.url, 'GET', `/v2/products?limit=2&sort=price.amount&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`);
    assert.equal(next.status, 200);
    assert.deepEqual(
      next.body.data.map((p: Json) => p.price.amount),
      [2, 3],
    );
  });

  it('an event committed through one process is listed by the other at once', async () => {
    // On PostgreSQL the stamper's NOTIFY, sent once the event is sequenced, wakes every process (src/runtime/event-signal.ts).
    const created = await call(b.url, 'POST', '/v2/products', { name: 'Announced', price: { amount: 1, currency: 'EUR' } });
    let event: Json | undefined;
    for (let i = 0; i < 100 && !event; i++) {
      const page = await call(a.url, 'GET', '/events?type=product.created&limit=100');
      event = (page.body.data as Json[]).find((e) => e.data.object.id === created.body.id);
      if (!event) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(event?.type, 'product.created');
    assert.equal(event?.data.object.name, 'Announced');
  });

  it('reports both dependencies ready', async () => {
    const ready = await call(a.url, 'GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.checks.store, 'ok');
    if (REDIS_URL) assert.equal(ready.body.checks.redis, 'ok');
  });
});
