// Two `canon serve` processes on one PostgreSQL, with Redis and without (LISTEN/NOTIFY): a stream held on one receives what the other commits, exactly once and in order.
/* eslint-disable @typescript-eslint/no-explicit-any */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { EventSource } from 'eventsource';
import { eventually } from '../support/eventually.js';
import { ADMIN_KEY } from '../support/harness.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../support/pg.js';
import { startCanon, type CanonProcess } from '../support/processes.js';
import { REDIS_SKIP, REDIS_URL, runPrefix } from '../support/redis.js';

type Json = Record<string, any>;

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': ADMIN_KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

/** An `eventsource` client with the admin key that records every event it dispatches. */
function tap(base: string): { es: EventSource; events: Array<{ id: string; type: string; data: Json }>; opened: () => Promise<unknown> } {
  const events: Array<{ id: string; type: string; data: Json }> = [];
  let opens = 0;
  class Recording extends EventSource {
    override dispatchEvent(event: Event): boolean {
      const e = event as Event & { data?: unknown; lastEventId?: string };
      if (typeof e.data === 'string') events.push({ id: e.lastEventId ?? '', type: e.type, data: JSON.parse(e.data) as Json });
      return super.dispatchEvent(event);
    }
  }
  const es = new Recording(`${base}/events`, { fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, 'x-api-key': ADMIN_KEY } }) });
  es.addEventListener('open', () => opens++);
  return { es, events, opened: () => eventually(async () => opens > 0, 'the stream to open') };
}

/** Every event after `afterId`, following the cursor; bounded. */
async function listAfter(base: string, afterId: string): Promise<Json[]> {
  const out: Json[] = [];
  let path = `/events?limit=100&after=${afterId}`;
  for (let i = 0; i < 100; i++) {
    const res = await call(base, 'GET', path);
    assert.equal(res.status, 200);
    out.push(...res.body.data);
    if (!res.body.pagination.has_more) return out;
    path = `/events?limit=100&cursor=${encodeURIComponent(res.body.pagination.next_cursor)}`;
  }
  throw new Error('too many pages');
}

function streamSuite(label: string, skip: string | false, extraEnv: () => Record<string, string>): void {
  describe(`a stream on one process receives what another commits (${label})`, { skip }, () => {
    let db: TestDatabase;
    let a: CanonProcess;
    let b: CanonProcess;
    before(async () => {
      db = await createTestDatabase();
      const env = {
        DATABASE_URL: db.url,
        CANON_ADMIN_API_KEY: ADMIN_KEY,
        CANON_SECRET: 'shared-secret',
        CANON_DB_POOL_SIZE: '4',
        ...extraEnv(),
      };
      [a, b] = await Promise.all([startCanon(env), startCanon(env)]);
    });
    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await db?.drop();
    });

    it('an event committed through A arrives on a stream held on B, as A lists it', async () => {
      const onB = tap(b.url);
      try {
        await onB.opened();
        const created = await call(a.url, 'POST', '/v2/products', { name: `from A ${randomUUID()}`, price: { amount: 1, currency: 'EUR' } });
        assert.equal(created.status, 201);
        const started = Date.now();
        const event = await eventually(async () => onB.events.find((e) => e.data.data.object.id === created.body.id), 'the event on B', 5000);
        assert.ok(Date.now() - started < 5000);
        assert.equal(event.type, 'product.created');
        const listed = await eventually(
          async () => (await call(a.url, 'GET', `/events?limit=100&type=product.created`)).body.data.find((e: Json) => e.id === event.id),
          'the event listed on A',
        );
        assert.deepEqual(event.data, listed);
      } finally {
        onB.es.close();
      }
    });

    it('events committed through both processes at once reach streams on both, each exactly once and in sequence order', async () => {
      const anchor = await call(a.url, 'POST', '/v2/products', { name: 'anchor', price: { amount: 0, currency: 'EUR' } });
      const anchorEvent = await eventually(
        async () => (await call(b.url, 'GET', '/events?limit=100&type=product.created')).body.data.find((e: Json) => e.data.object.id === anchor.body.id),
        'the anchor event',
      );
      const onA = tap(`${a.url}`);
      const onB = tap(`${b.url}`);
      try {
        await Promise.all([onA.opened(), onB.opened()]);
        const writes = Array.from({ length: 60 }, (_, i) => call(i % 2 ? a.url : b.url, 'POST', '/v2/products', { name: `both ${i}`, price: { amount: i, currency: 'EUR' } }));
        for (const w of await Promise.all(writes)) assert.equal(w.status, 201);
        const expected = await eventually(async () => {
          const events = await listAfter(a.url, anchorEvent.id);
          return events.length >= 60 ? events : undefined;
        }, 'all 60 listed');
        for (const [name, t] of [
          ['A', onA],
          ['B', onB],
        ] as const) {
          await eventually(async () => t.events.length >= expected.length, `all ${expected.length} on the stream held on ${name}`, 10_000);
          await new Promise((resolve) => setTimeout(resolve, 200));
          assert.deepEqual(
            t.events.map((e) => e.id),
            expected.map((e) => e.id),
            `the stream on ${name}: exactly the list, in order`,
          );
        }
      } finally {
        onA.es.close();
        onB.es.close();
      }
    });
  });
}

const prefix = runPrefix();
streamSuite('with Redis', PG_SKIP || REDIS_SKIP, () => ({ REDIS_URL: REDIS_URL!, CANON_REDIS_PREFIX: prefix }));
// Without Redis and with the poll a minute apart, only PostgreSQL's NOTIFY (sent when the sequencer stamps) can wake B in time.
streamSuite('without Redis: PostgreSQL LISTEN/NOTIFY', PG_SKIP, () => ({ CANON_EVENT_POLL_MS: '60000' }));
