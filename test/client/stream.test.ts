// canon-client's openEventStream against a real server: events arrive as listed, the stream resumes across a cut connection and a restart with nothing lost or doubled, abort and break close it, error answers end it with a CanonError, 429 waits its Retry-After.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../src/config/config.js';
import { CanonError } from '../../packages/client/src/errors.js';
import type { CanonEvent } from '../../packages/client/src/event.js';
import { backoff, openEventStream, retryAfterMs, type EventStreamOptions } from '../../packages/client/src/stream.js';
import { eventually } from '../support/eventually.js';
import { ADMIN_KEY, createCustomer, startServer, TEST_OVERLOAD, type TestServer } from '../support/harness.js';
import { createTestDatabase, PG_URL, type TestDatabase } from '../support/pg.js';
import { startRelay } from '../support/relay.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A short `retry:` and fast polls, so reconnections and new events show within a test's patience (as test/e2e/events/events-stream.test.ts). */
const RETRY_MS = 200;
const CONFIG: Partial<Config> = {
  eventPollMs: 100,
  sseRetryMs: RETRY_MS,
  sseHeartbeatSeconds: 1,
  sseMaxStreamsPerPrincipal: 3,
  sqliteSynchronous: 'normal',
  overload: TEST_OVERLOAD,
};
const PATIENCE_MS = 20_000;

interface Attempt {
  at: number;
  headers: Headers;
  /** The id of the last event the loop had received when the attempt was made. */
  lastReceived: string | undefined;
  /** The answer's status, or null when the request failed (refused, reset). */
  status: number | null;
}

/** Runs an openEventStream loop in the background, recording every event, every connection attempt and how it ended. */
class Follower {
  readonly events: CanonEvent[] = [];
  readonly attempts: Attempt[] = [];
  /** How many times the credentials' headers were asked for. */
  headerCalls = 0;
  error: unknown;
  ended = false;
  readonly loop: Promise<void>;

  constructor(url: string, options: Partial<EventStreamOptions> & { key?: string }, onEvent?: (event: CanonEvent, self: Follower) => boolean | void) {
    const key = options.key ?? ADMIN_KEY;
    const recording: typeof fetch = async (input, init) => {
      const attempt: Attempt = { at: Date.now(), headers: new Headers(init?.headers), lastReceived: this.events.at(-1)?.id, status: null };
      this.attempts.push(attempt);
      const res = await fetch(input, init);
      attempt.status = res.status;
      return res;
    };
    const stream = openEventStream({
      url,
      fetch: recording,
      headers: async () => {
        this.headerCalls++;
        return { 'x-api-key': key };
      },
      ...options,
    });
    this.loop = (async () => {
      try {
        for await (const event of stream) {
          this.events.push(event);
          // A callback returning true stops the loop (break, so the iterator's return() closes the connection).
          if (onEvent?.(event, this) === true) break;
        }
      } catch (err) {
        this.error = err;
      } finally {
        this.ended = true;
      }
    })();
  }

  /** Resolves once a connection answered 200. */
  connected(): Promise<void> {
    return eventually(async () => this.attempts.some((a) => a.status === 200), 'the stream to connect').then(() => undefined);
  }
}

/** Creates `n` products, `concurrency` at a time; returns their ids in creation order. */
async function createProducts(server: TestServer, n: number, concurrency: number): Promise<string[]> {
  const ids: string[] = new Array<string>(n);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) {
      const res = await server.request('POST', '/v2/products', { body: { name: `followed ${i}`, price: { amount: i + 1, currency: 'EUR' } } });
      assert.equal(res.status, 201, res.text);
      ids[i] = res.body.id;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return ids;
}

/** Every event after `afterId` (or all), following the cursor (bounded). */
async function listAfter(server: TestServer, afterId?: string): Promise<Json[]> {
  const out: Json[] = [];
  let path = `/events?limit=100${afterId ? `&after=${afterId}` : ''}`;
  for (let i = 0; i < 100; i++) {
    const res = await server.request('GET', path);
    assert.equal(res.status, 200, res.text);
    out.push(...res.body.data);
    if (!res.body.pagination.has_more) return out;
    path = `/events?limit=100&cursor=${encodeURIComponent(res.body.pagination.next_cursor)}`;
  }
  throw new Error('too many pages');
}

/** The list after `afterId` once it holds an event for each of `ids` (PostgreSQL makes events readable once stamped). */
function listed(server: TestServer, afterId: string | undefined, ids: readonly string[]): Promise<Json[]> {
  return eventually(
    async () => {
      const events = await listAfter(server, afterId);
      const seen = new Set(events.map((e) => e.data.object.id));
      return ids.every((id) => seen.has(id)) ? events : undefined;
    },
    `${ids.length} objects in the event list`,
    PATIENCE_MS,
    50,
  );
}

/** A product whose creation event is listed: its event id is where a test's stream starts. */
async function anchor(server: TestServer): Promise<string> {
  const [id] = await createProducts(server, 1, 1);
  const events = await listed(server, undefined, [id!]);
  return events.find((e) => e.data.object.id === id)!.id as string;
}

/** Waits until the follower holds an event for each of `expected`, lets any duplicate show, then asserts exactly `expected` in order. */
async function receivedExactly(follower: Follower, expected: readonly Json[], what: string): Promise<void> {
  const want = new Set(expected.map((e) => e.id as string));
  await eventually(async () => follower.events.filter((e) => want.has(e.id)).length >= want.size, `${what}: ${want.size} events`, PATIENCE_MS, 20);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(
    follower.events.map((e) => e.id),
    expected.map((e) => e.id),
    `${what}: exactly the listed events, once each, in order`,
  );
  assert.deepEqual(follower.events, expected, `${what}: each event as GET /events renders it`);
}

/** Open streams on the server, from its own gauge. */
async function openStreams(server: TestServer): Promise<number> {
  const res = await server.request('GET', '/metrics');
  const m = /^canon_event_streams (\d+)$/m.exec(res.text);
  assert.ok(m, res.text.slice(0, 300));
  return Number(m[1]);
}

const MODES = ['listen', ...(PG_URL ? ['listen/postgres'] : [])];

for (const mode of MODES) {
  describe(`openEventStream against a real server (${mode})`, () => {
    let dir: string | undefined;
    let db: TestDatabase | undefined;
    let databaseUrl: string;
    let server: TestServer;
    before(async () => {
      if (mode === 'listen') {
        dir = mkdtempSync(join(tmpdir(), 'canon-client-stream-'));
        databaseUrl = `sqlite:${join(dir, 'canon.db')}`;
      } else {
        db = await createTestDatabase();
        databaseUrl = db.url;
      }
      server = await startServer('listen', { ...CONFIG, databaseUrl });
    });
    after(async () => {
      await server?.close();
      await db?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const eventsUrl = (): string => `${server.baseUrl}/events`;

    it('yields the events written after `after`, each as GET /events lists it, in order; `type` filters', async () => {
      const start = await anchor(server);
      const controller = new AbortController();
      const all = new Follower(eventsUrl(), { after: start, signal: controller.signal });
      const updates = new Follower(eventsUrl(), { after: start, type: ['product.updated'], signal: controller.signal });
      try {
        const ids = await createProducts(server, 30, 5);
        const patched = await server.request('PATCH', `/v2/products/${ids[0]!}`, { body: { name: 'renamed' } });
        assert.equal(patched.status, 200, patched.text);
        const withUpdate = await eventually(
          async () => {
            const events = await listAfter(server, start);
            return events.some((e) => e.type === 'product.updated') ? events : undefined;
          },
          'the update listed',
          PATIENCE_MS,
          50,
        );
        assert.equal(withUpdate.length, 31);
        await receivedExactly(all, withUpdate, 'every event');
        await receivedExactly(
          updates,
          withUpdate.filter((e) => e.type === 'product.updated'),
          'product.updated only',
        );
        assert.equal(all.attempts.length, 1, 'one connection');
        assert.equal(all.attempts[0]!.headers.get('accept'), 'text/event-stream');
        assert.equal(all.attempts[0]!.headers.get('last-event-id'), null, 'a first connection names no Last-Event-ID');
        assert.equal(all.error, undefined);
      } finally {
        controller.abort();
        await Promise.all([all.loop, updates.loop]);
      }
    });

    it('resumes with Last-Event-ID across a cut connection and a server restart: nothing lost, nothing doubled; waits grow, bounded', async () => {
      const relay = await startRelay();
      relay.retarget(server.baseUrl);
      const start = await anchor(server);
      const controller = new AbortController();
      const follower = new Follower(`${relay.url}/events`, { after: start, signal: controller.signal, reconnect: { maxDelayMs: 1000 } });
      try {
        await follower.connected();
        const first = await createProducts(server, 20, 4);
        await eventually(async () => first.every((id) => follower.events.some((e) => e.data.object.id === id)), 'the first 20', PATIENCE_MS);
        const lastSeen = follower.events.at(-1)!.id;
        // Cut the connection; while the client cannot connect, events are written and the server restarts on the same data.
        relay.retarget(undefined);
        const cutAt = Date.now();
        const missed = await createProducts(server, 30, 5);
        await listed(server, start, missed);
        await server.close();
        server = await startServer('listen', { ...CONFIG, databaseUrl });
        const whileDown = await createProducts(server, 10, 2);
        // Down long enough for the waits to reach their bound.
        await eventually(async () => follower.attempts.filter((a) => a.at > cutAt).length >= 6, 'six attempts while down', PATIENCE_MS);
        relay.retarget(server.baseUrl);
        const afterUp = await createProducts(server, 20, 4);
        const expected = await listed(server, start, [...first, ...missed, ...whileDown, ...afterUp]);
        assert.equal(expected.length, 80);
        await receivedExactly(follower, expected, 'the resumed stream');

        const reconnects = follower.attempts.filter((a) => a.at > cutAt);
        assert.equal(reconnects[0]!.headers.get('last-event-id'), lastSeen);
        for (const a of follower.attempts) assert.equal(a.headers.get('last-event-id'), a.lastReceived ?? null, 'each connection names the last event received before it');
        assert.ok(reconnects.some((a) => a.status === 200) && reconnects.some((a) => a.status === null), 'failed attempts, then a stream');
        assert.equal(follower.headerCalls, follower.attempts.length, 'the credentials are asked for before every connection');
        // The first wait is the server's retry:, later ones grow with jitter and stay within maxDelayMs.
        const gaps = reconnects.slice(1).map((a, i) => a.at - reconnects[i]!.at);
        assert.ok(reconnects[0]!.at - cutAt >= RETRY_MS - 20, `first reconnection after ${reconnects[0]!.at - cutAt} ms`);
        // Timers never fire early; late they may, by as long as the event loop is held and a refused connection takes
        // (this process also runs the restarting server, and CI shares two cores with other suites): the upper bound
        // allows four seconds of that, far below the 30 s a wait could reach without the 1 s bound.
        for (const gap of gaps) assert.ok(gap >= RETRY_MS - 20 && gap <= 1000 + 4000, `a wait of ${gap} ms (retry ${RETRY_MS}, bound 1000): ${JSON.stringify(gaps)}`);
        assert.ok(Math.max(...gaps) > 2 * RETRY_MS, `the waits grew: ${JSON.stringify(gaps)}`);
        assert.equal(follower.error, undefined);
      } finally {
        controller.abort();
        await follower.loop;
        await relay.close();
      }
    });

    it('aborting the signal ends the iteration without an error and closes the connection; so does breaking out of the loop', async () => {
      await eventually(async () => (await openStreams(server)) === 0, 'no stream open before');
      const controller = new AbortController();
      const aborted = new Follower(eventsUrl(), { signal: controller.signal });
      await aborted.connected();
      await eventually(async () => (await openStreams(server)) === 1, 'the stream open on the server');
      controller.abort();
      await aborted.loop;
      assert.equal(aborted.ended, true);
      assert.equal(aborted.error, undefined, 'an abort is a clean end');
      await eventually(async () => (await openStreams(server)) === 0, 'the server to see the stream closed');

      // Breaking out after the first event: the iterator's return() cancels the response body.
      const start = await anchor(server);
      const broken = new Follower(eventsUrl(), { after: start }, () => true);
      await createProducts(server, 3, 1);
      await broken.loop;
      assert.equal(broken.events.length, 1);
      assert.equal(broken.error, undefined);
      await eventually(async () => (await openStreams(server)) === 0, 'the server to see the broken-off stream closed');
      assert.equal(broken.attempts.length, 1, 'no reconnection after a break');

      // A signal aborted before the first connection: nothing is fetched.
      const early = new Follower(eventsUrl(), { signal: AbortSignal.abort() });
      await early.loop;
      assert.equal(early.attempts.length, 0);
    });

    it('a refused credential ends the iteration with CanonError 401 after one attempt; an unknown `after` with 400 INVALID_PARAMETER', async () => {
      const refused = new Follower(eventsUrl(), { key: 'ck_not_a_key_0123456789abcdefghijklmn' });
      await refused.loop;
      assert.ok(refused.error instanceof CanonError, String(refused.error));
      assert.equal(refused.error.status, 401);
      assert.equal(refused.error.code, 'UNAUTHENTICATED');
      assert.match(refused.error.requestId ?? '', /\S/, 'the request id is carried');
      assert.equal(refused.attempts.length, 1, 'no retry');

      const unknown = new Follower(eventsUrl(), { after: randomUUID() });
      await unknown.loop;
      assert.ok(unknown.error instanceof CanonError);
      assert.equal(unknown.error.status, 400);
      assert.equal(unknown.error.code, 'INVALID_PARAMETER');
      assert.equal(unknown.attempts.length, 1);

      // Not an event stream (the JSON list answered instead): a CanonError, not a hang.
      const notStream = openEventStream({
        url: eventsUrl(),
        fetch: (input, init) => {
          const headers = new Headers(init?.headers);
          headers.set('accept', 'application/json');
          return fetch(input, { ...init, headers });
        },
        headers: async () => ({ 'x-api-key': ADMIN_KEY }),
      });
      await assert.rejects(notStream.next(), (err: unknown) => err instanceof CanonError && err.code === 'NOT_AN_EVENT_STREAM');
    });

    it('a 429 (too many streams for the credential) waits its Retry-After, then connects', async () => {
      const customer = await createCustomer(server, `follower-${randomUUID()}@example.com`);
      const holders = await Promise.all(
        Array.from({ length: 3 }, async () => {
          const controller = new AbortController();
          const res = await fetch(eventsUrl(), { headers: { accept: 'text/event-stream', 'x-api-key': customer.key }, signal: controller.signal });
          assert.equal(res.status, 200);
          return controller;
        }),
      );
      const controller = new AbortController();
      const follower = new Follower(eventsUrl(), { key: customer.key, signal: controller.signal });
      try {
        await eventually(async () => follower.attempts[0]?.status === 429, 'the first attempt refused with 429');
        holders[0]!.abort();
        await eventually(async () => follower.attempts.some((a) => a.status === 200), 'the stream to connect', PATIENCE_MS);
        const [refusedAttempt, next] = follower.attempts;
        // Retry-After: 5 (src/events/stream-caps.ts) is waited out in full, not the 200 ms retry.
        assert.ok(next!.at - refusedAttempt!.at >= 4_900, `waited ${next!.at - refusedAttempt!.at} ms`);
        assert.equal(follower.attempts.length, 2);
        assert.equal(follower.error, undefined);
      } finally {
        controller.abort();
        for (const h of holders) h.abort();
        await follower.loop;
      }
    });
  });
}

describe('openEventStream waits', () => {
  it('after a clean end, the server’s retry:; while attempts fail, growing with jitter from there, never below it nor past the bound', () => {
    assert.equal(backoff(200, 0, 1000), 200);
    assert.equal(
      backoff(200, 1, 1000, () => 0),
      200,
    );
    assert.equal(
      backoff(200, 1, 1000, () => 1),
      400,
    );
    assert.equal(
      backoff(200, 2, 1000, () => 1),
      800,
    );
    assert.equal(
      backoff(200, 3, 1000, () => 1),
      1000,
    );
    assert.equal(
      backoff(200, 3, 1000, () => 0),
      500,
    );
    assert.equal(
      backoff(200, 60, 1000, () => 0.999),
      999.5,
    );
    // A server retry: longer than the bound is still waited out.
    assert.equal(
      backoff(5000, 4, 1000, () => 0.5),
      5000,
    );
  });

  it('reads Retry-After as delay-seconds or an HTTP-date', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    assert.equal(retryAfterMs('5', now), 5000);
    assert.equal(retryAfterMs(new Date(now + 7000).toUTCString(), now), 7000);
    assert.equal(retryAfterMs(new Date(now - 7000).toUTCString(), now), 0);
    assert.equal(retryAfterMs('soon', now), undefined);
    assert.equal(retryAfterMs(null, now), undefined);
  });

  it('checks its options at once', () => {
    const base = { url: 'http://127.0.0.1:1/events', fetch, headers: async () => ({}) };
    assert.throws(() => openEventStream({ ...base, url: 'not a url' }), TypeError);
    assert.throws(() => openEventStream({ ...base, reconnect: { maxAttempts: 0 } }), RangeError);
    assert.throws(() => openEventStream({ ...base, reconnect: { maxDelayMs: -1 } }), RangeError);
  });

  it('gives up after maxAttempts failed connections in a row, with the last error', async () => {
    const started = Date.now();
    let calls = 0;
    const stream = openEventStream({
      url: 'http://127.0.0.1:9/events',
      fetch: async () => {
        calls++;
        throw new TypeError('fetch failed');
      },
      headers: async () => ({}),
      reconnect: { maxAttempts: 2, maxDelayMs: 50 },
    });
    await assert.rejects(stream.next(), (err: unknown) => err instanceof TypeError && err.message === 'fetch failed');
    assert.equal(calls, 2);
    // One wait before the second attempt: the default retry (3 s) until a server sends its own, even past maxDelayMs.
    assert.ok(Date.now() - started >= 3000 - 50, `${Date.now() - started} ms`);
  });
});

describe('openEventStream credentials', () => {
  it('what the headers provider throws ends the iteration with that error, before any request', async () => {
    let calls = 0;
    const refused = new CanonError(401, { code: 'INVALID_CLIENT', message: 'The client credentials are not valid.' });
    const stream = openEventStream({
      url: 'http://127.0.0.1:9/events',
      fetch: async () => {
        calls++;
        throw new TypeError('fetch failed');
      },
      headers: async () => {
        throw refused;
      },
    });
    await assert.rejects(stream.next(), (err: unknown) => err === refused);
    assert.equal(calls, 0);
  });
});

describe('the receiving modules in a browser bundle', () => {
  it('stream.ts and webhooks/index.ts bundle for the browser with no Node built-in', async () => {
    const { build } = await import('esbuild');
    const root = fileURLToPath(new URL('../../../packages/client/src/', import.meta.url));
    const result = await build({
      entryPoints: [join(root, 'stream.ts'), join(root, 'webhooks', 'index.ts')],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      outdir: 'out',
      metafile: true,
      logLevel: 'silent',
    });
    const imports = Object.values(result.metafile.inputs).flatMap((input) => input.imports.map((i) => i.path));
    const builtins = imports.filter((path) => path.startsWith('node:') || builtinModules.includes(path));
    assert.deepEqual(builtins, []);
    assert.ok(
      Object.keys(result.metafile.inputs).some((path) => path.includes('eventsource-parser')),
      'eventsource-parser is bundled',
    );
  });
});
