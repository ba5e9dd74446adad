// Exactly N of a burst pass a limit of N over two processes sharing Redis; headers count down; Retry-After is the next token.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ADMIN_KEY } from '../support/harness.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../support/pg.js';
import { startCanon, type CanonProcess } from '../support/processes.js';
import { REDIS_SKIP, REDIS_URL, runPrefix } from '../support/redis.js';

describe('rate limits over two processes sharing Redis', { skip: PG_SKIP || REDIS_SKIP }, () => {
  let db: TestDatabase;
  const procs: CanonProcess[] = [];
  after(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await db?.drop();
  });

  it('exactly 50 of 120 concurrent requests pass a limit of 50', async () => {
    db = await createTestDatabase();
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: REDIS_URL!,
      CANON_REDIS_PREFIX: runPrefix(),
      CANON_ADMIN_API_KEY: ADMIN_KEY,
      CANON_SECRET: 's',
      CANON_RATE_LIMIT: 'on',
      CANON_RATE_LIMIT_PER_PRINCIPAL: '50/3600',
      CANON_RATE_LIMIT_GLOBAL: '100000/1',
    };
    procs.push(...(await Promise.all([startCanon(env), startCanon(env)])));
    const results = await Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        const res = await fetch(`${procs[i % 2]!.url}/v2/products?limit=1`, { headers: { 'x-api-key': ADMIN_KEY } });
        await res.arrayBuffer();
        return { status: res.status, remaining: Number(res.headers.get('x-ratelimit-remaining')), retry: res.headers.get('retry-after') };
      }),
    );
    const ok = results.filter((r) => r.status === 200);
    assert.equal(ok.length, 50, results.map((r) => r.status).join(','));
    assert.equal(results.filter((r) => r.status === 429).length, 70);
    // Each granted request saw a distinct remaining count: 49, 48, … 0.
    assert.deepEqual(
      ok.map((r) => r.remaining).sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, i) => i),
    );
    // One token every 72 s.
    for (const r of results.filter((x) => x.status === 429)) assert.ok(Math.abs(Number(r.retry) - 72) <= 1, `Retry-After ${r.retry}`);
  });
});
