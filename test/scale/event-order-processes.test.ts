// DESIGN §9's ordering promise on PostgreSQL: 4 processes writing at once (one SIGKILLed mid-write) while 2 readers tail GET /events by cursor; each reader ends with every committed event exactly once, in order.
/* eslint-disable @typescript-eslint/no-explicit-any */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { Agent, fetch } from 'undici';
import { eventually } from '../support/eventually.js';
import { ADMIN_KEY } from '../support/harness.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../support/pg.js';
import { startCanon, type CanonProcess } from '../support/processes.js';

type Json = Record<string, any>;

const WRITERS = 4;
const PRODUCTS_PER_WRITER = 150;
const CONCURRENCY = 8;
/** The writer killed once it has this many answers, with requests still under way. */
const KILLED = 3;
const KILL_AFTER = 60;
/** The whole run's bound; the test itself takes a fraction of it. */
const DEADLINE_MS = 45_000;

/**
 * Idle connections are dropped after 1 s, well before the server's 5 s keep-alive: with 40 requests under way on a
 * loaded machine, a connection left idle for the server's timeout and picked again at that moment fails as "other side closed".
 */
const agent = new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 });

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}${path}`, {
    dispatcher: agent,
    method,
    headers: { 'x-api-key': ADMIN_KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(15_000),
  }).catch((err: Error) => {
    throw new Error(`${method} ${base}${path}: ${err.message} (${String((err.cause as Error | undefined)?.message ?? err.cause)})`, { cause: err });
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

/** One process's writes: creates, every third product patched once, CONCURRENCY at a time; a killed process's writers stop at their first failure. */
async function write(p: CanonProcess, index: number, onAnswer: () => void, killed: () => boolean): Promise<{ ok: number; failed: boolean }> {
  let next = 0;
  let ok = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < PRODUCTS_PER_WRITER && !failed; i = next++) {
      try {
        const created = await call(p.url, 'POST', '/v2/products', { name: `w${index} p${i}`, price: { amount: i, currency: 'EUR' } });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        ok++;
        onAnswer();
        if (i % 3 === 0) {
          const patched = await call(p.url, 'PATCH', `/v2/products/${created.body.id}`, { name: `w${index} p${i} patched` });
          assert.equal(patched.status, 200, JSON.stringify(patched.body));
          ok++;
          onAnswer();
        }
      } catch (err) {
        if (!killed()) throw err;
        failed = true;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { ok, failed };
}

/**
 * A reader tailing the log by cursor: each page's `next_cursor` (which holds the position even on the last page)
 * starts the next. It runs until `done()` says the final count is known and it has reached it, or the deadline.
 */
async function tail(base: string, done: () => number | undefined, deadline: number): Promise<{ events: Json[]; pages: number }> {
  const events: Json[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (; pages < 20_000 && Date.now() < deadline; pages++) {
    const res = await call(base, 'GET', `/events?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    events.push(...res.body.data);
    cursor = res.body.pagination.next_cursor;
    assert.ok(cursor, 'every page has a cursor');
    const total = done();
    if (total !== undefined && events.length >= total) break;
    if (!res.body.pagination.has_more) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { events, pages };
}

describe('event order across 4 writing processes, one killed, and 2 tailing readers (PostgreSQL)', { skip: PG_SKIP }, () => {
  let db: TestDatabase;
  const processes: CanonProcess[] = [];
  before(async () => {
    db = await createTestDatabase();
    // The sweep that stamps what a killed writer committed runs every CANON_EVENT_POLL_MS in every process.
    const env = {
      DATABASE_URL: db.url,
      CANON_ADMIN_API_KEY: ADMIN_KEY,
      CANON_SECRET: 'shared-secret',
      CANON_RATE_LIMIT: 'off',
      CANON_EVENT_POLL_MS: '200',
      CANON_DB_POOL_SIZE: '5',
    };
    // The first creates the tables; the others start together.
    processes.push(await startCanon(env));
    processes.push(...(await Promise.all(Array.from({ length: WRITERS - 1 }, () => startCanon(env)))));
  });
  after(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await agent.close();
    await db?.drop();
  });

  it('every committed event reaches each reader exactly once, in strictly increasing sequence order', async () => {
    const deadline = Date.now() + DEADLINE_MS;
    /** Set once the full list is known: the readers stop when they have as many events. */
    const final: { count?: number } = {};
    const readers = [tail(processes[0]!.url, () => final.count, deadline), tail(processes[1]!.url, () => final.count, deadline)];
    // Awaited at the end; a reader failing early must not be an unhandled rejection meanwhile.
    for (const r of readers) r.catch(() => undefined);
    let answers = 0;
    let killedAt: number | undefined;
    const victim = processes[KILLED]!;
    const writers = processes.map((p, i) =>
      write(
        p,
        i,
        () => {
          if (i !== KILLED || ++answers !== KILL_AFTER) return;
          // Mid-write: CONCURRENCY requests are under way, some committed and perhaps not yet stamped.
          killedAt = Date.now();
          victim.child.kill('SIGKILL');
        },
        () => i === KILLED && killedAt !== undefined,
      ),
    );
    const results = await Promise.all(writers);
    assert.ok(killedAt, 'the writer was killed');
    assert.ok(results[KILLED]!.failed, 'the killed writer’s requests failed');
    for (const [i, r] of results.entries()) if (i !== KILLED) assert.equal(r.ok, PRODUCTS_PER_WRITER + Math.ceil(PRODUCTS_PER_WRITER / 3), `writer ${i}`);

    // The ground truth, from the database: every committed event, once the sweep has stamped them all.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    let committed: number;
    try {
      // What a writer killed between its commit and its stamping leaves, made certain: a committed, unstamped event.
      // Nothing is written after it, so only the sweep of the surviving processes can stamp it.
      await client.query(
        `INSERT INTO canon_events (id, type, resource, object_id, owner_id, api_version, created_at, data)
         SELECT gen_random_uuid(), 'product.updated', resource, object_id, owner_id, api_version, now(), data FROM canon_events WHERE type = 'product.created' LIMIT 1`,
      );
      const counts = await eventually(
        async () => {
          const { rows } = await client.query('SELECT count(*)::int AS n, count(commit_sequence)::int AS stamped FROM canon_events');
          const row = rows[0] as { n: number; stamped: number };
          return row.n === row.stamped ? row : undefined;
        },
        'every committed event stamped',
        10_000,
        50,
      );
      committed = counts.n;
    } finally {
      await client.end();
    }
    // The full list, read at the end from a surviving process.
    const full: Json[] = [];
    let path = '/events?limit=100';
    for (let i = 0; i < 1000; i++) {
      const res = await call(processes[2]!.url, 'GET', path);
      full.push(...res.body.data);
      if (!res.body.pagination.has_more) break;
      path = `/events?limit=100&cursor=${encodeURIComponent(res.body.pagination.next_cursor)}`;
    }
    assert.equal(full.length, committed, 'the list holds every committed event');
    for (let i = 1; i < full.length; i++) assert.ok(full[i]!.sequence > full[i - 1]!.sequence, 'the full list is in strictly increasing sequence order');
    const survivors = (WRITERS - 1) * (PRODUCTS_PER_WRITER + Math.ceil(PRODUCTS_PER_WRITER / 3));
    assert.ok(committed >= survivors + results[KILLED]!.ok, `${committed} events: at least every answered write`);
    final.count = full.length;

    const ids = full.map((e) => e.id);
    for (const [n, reader] of (await Promise.all(readers)).entries()) {
      const got = reader.events.map((e) => e.id);
      assert.equal(new Set(got).size, got.length, `reader ${n}: no event twice`);
      for (let i = 1; i < reader.events.length; i++) assert.ok(reader.events[i]!.sequence > reader.events[i - 1]!.sequence, `reader ${n}: strictly increasing at ${i}`);
      assert.deepEqual(got, ids, `reader ${n}: every committed event, none skipped (${reader.pages} pages)`);
    }
  });
});
