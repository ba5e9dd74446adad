// GET /events as a stream, read by the real `eventsource` client and raw sockets: framing, replay joined to the live tail, resume, heartbeats, visibility, revocation, slow consumers, shutdown, errors.
/* eslint-disable @typescript-eslint/no-explicit-any */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EventSource } from 'eventsource';
import type { Config } from '../../../src/config/config.js';
import { eventually } from '../../support/eventually.js';
import { eventViolations } from '../../support/conformance.js';
import { ADMIN_KEY, createCustomer, errorShape, fromFetch, startServer, TEST_OVERLOAD, type TestServer } from '../../support/harness.js';
import { createTestDatabase, PG_URL, type TestDatabase } from '../../support/pg.js';

type Json = Record<string, any>;

/**
 * Small intervals so revocations, heartbeats and polls show within a test's patience; SQLite without an fsync per
 * commit (thousands of writes); and a busy machine must not turn requests into overload 503s (that guard has its own tests).
 */
const CONFIG: Partial<Config> = {
  eventPollMs: 100,
  sseRetryMs: 200,
  sseHeartbeatSeconds: 1,
  sseMaxStreamsPerPrincipal: 3,
  sqliteSynchronous: 'normal',
  overload: TEST_OVERLOAD,
};

interface Received {
  id: string;
  type: string;
  data: Json;
}

/** An `eventsource` client that records every event it dispatches, every request it makes (headers) and every error. */
class Tap {
  readonly events: Received[] = [];
  readonly requests: Array<Record<string, string>> = [];
  readonly errors: Array<{ at: number; code: number | undefined; message: string | undefined }> = [];
  opens = 0;
  readonly es: EventSource;

  constructor(url: string, key: string) {
    const events = this.events;
    // The client names each event by its `event:` field; a listener per type would miss types not foreseen, so the dispatch itself is recorded.
    class Recording extends EventSource {
      override dispatchEvent(event: Event): boolean {
        const e = event as Event & { data?: unknown; lastEventId?: string };
        if (typeof e.data === 'string') events.push({ id: e.lastEventId ?? '', type: e.type, data: JSON.parse(e.data) as Json });
        return super.dispatchEvent(event);
      }
    }
    this.es = new Recording(url, {
      fetch: (input, init) => {
        const headers = { ...init.headers, 'x-api-key': key };
        this.requests.push(headers);
        return fetch(input, { ...init, headers });
      },
    });
    this.es.addEventListener('open', () => this.opens++);
    this.es.addEventListener('error', (e) => this.errors.push({ at: Date.now(), code: e.code, message: e.message }));
  }

  opened(): Promise<void> {
    return eventually(async () => this.opens > 0, 'the stream to open').then(() => undefined);
  }

  close(): void {
    this.es.close();
  }
}

/** A TCP relay in front of a server: `down()` cuts every connection and refuses new ones, `up(port)` relays to a (restarted) server. */
class Relay {
  private target: number | undefined;
  private readonly sockets = new Set<net.Socket>();
  private constructor(private readonly server: net.Server) {}

  static async start(): Promise<Relay> {
    const server = net.createServer();
    const relay = new Relay(server);
    server.on('connection', (client) => relay.accept(client));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return relay;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  private accept(client: net.Socket): void {
    if (this.target === undefined) {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.target, '127.0.0.1');
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.sockets.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  }

  up(port: number): void {
    this.target = port;
  }

  down(): void {
    this.target = undefined;
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    this.down();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

function portOf(server: TestServer): number {
  return Number(new URL(server.baseUrl!).port);
}

/** A raw `fetch` of the stream: the response, and everything its body says until `ms` pass or it ends. */
async function rawStream(server: TestServer, key: string, headers: Record<string, string> = {}, path = '/events') {
  const controller = new AbortController();
  const res = await fetch(`${server.baseUrl}${path}`, { headers: { accept: 'text/event-stream', 'x-api-key': key, ...headers }, signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  /** Reads for `ms`, or until the server ends the body; resolves with all text so far. */
  const read = async (ms: number): Promise<string> => {
    const deadline = Date.now() + ms;
    while (!ended && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      const next = await Promise.race([
        reader.read().then((r) => r),
        new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), Math.max(1, deadline - Date.now())))),
      ]);
      clearTimeout(timer);
      if (next === 'timeout') break;
      if (next.done) ended = true;
      else text += decoder.decode(next.value, { stream: true });
    }
    return text;
  };
  return {
    res,
    read,
    get ended() {
      return ended;
    },
    abort: () => controller.abort(),
  };
}

/** Creates `n` products, `concurrency` at a time; returns their ids in creation order. */
async function createProducts(server: TestServer, n: number, concurrency: number, extra: Json = {}): Promise<string[]> {
  const ids: string[] = new Array<string>(n);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) {
      const res = await server.request('POST', '/v2/products', { body: { name: `streamed ${i}`, price: { amount: i, currency: 'EUR' }, ...extra } });
      assert.equal(res.status, 201, res.text);
      ids[i] = res.body.id;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ids;
}

/** Every event after `afterId` (or all), following the cursor; bounded. */
async function listAfter(server: TestServer, afterId?: string, key = ADMIN_KEY): Promise<Json[]> {
  const out: Json[] = [];
  let path = `/events?limit=100${afterId ? `&after=${afterId}` : ''}`;
  for (let i = 0; i < 200; i++) {
    const res = await server.request('GET', path, { key });
    assert.equal(res.status, 200, res.text);
    out.push(...res.body.data);
    if (!res.body.pagination.has_more) return out;
    path = `/events?limit=100&cursor=${encodeURIComponent(res.body.pagination.next_cursor)}`;
  }
  throw new Error('too many pages');
}

/** Waits until the list after `afterId` holds an event for every object id in `ids` (on PostgreSQL events are readable once stamped). */
async function listed(server: TestServer, ids: readonly string[], afterId?: string): Promise<Json[]> {
  const wanted = new Set(ids);
  return eventually(
    async () => {
      const events = await listAfter(server, afterId);
      const seen = new Set(events.map((e) => e.data.object.id));
      return [...wanted].every((id) => seen.has(id)) ? events : undefined;
    },
    `${ids.length} objects in the event list`,
    20_000,
    50,
  );
}

/** An anchor: a product whose creation event is listed; streams `?after=` it (or started after it) see only what follows. */
async function anchor(server: TestServer): Promise<string> {
  const [id] = await createProducts(server, 1, 1, { name: `anchor ${randomUUID()}` });
  const events = await listed(server, [id!]);
  return events.find((e) => e.data.object.id === id)!.id;
}

/** Waits until `tap` has received every id of `expected`, lets duplicates show, then asserts exactly `expected`, in order. */
async function receivedExactly(server: TestServer, tap: Tap, expected: readonly Json[], what: string): Promise<void> {
  const want = new Set(expected.map((e) => e.id));
  await eventually(async () => tap.events.filter((e) => want.has(e.id)).length >= want.size, `${what}: ${want.size} events on the stream`, 20_000, 20);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const got = tap.events.map((e) => e.id);
  assert.equal(new Set(got).size, got.length, `${what}: no event twice`);
  assert.deepEqual(got, [...expected.map((e) => e.id)], `${what}: exactly the listed events, in sequence order`);
  const sequences = tap.events.map((e) => e.data.sequence as number);
  for (let i = 1; i < sequences.length; i++) assert.ok(sequences[i]! > sequences[i - 1]!, `${what}: strictly increasing sequence`);
  // Each frame's data is an event the catalog lists, in its schema for the version it names (issue 27.2).
  assert.deepEqual(
    eventViolations(
      server.runtime.model,
      tap.events.map((e) => e.data),
      { all: true },
    ),
    [],
    what,
  );
}

/** Streams need a socket: the listening modes, on SQLite (a file, so a restart keeps the log) and on PostgreSQL when configured. */
const MODES = ['listen', ...(PG_URL ? ['listen/postgres'] : [])];

for (const mode of MODES) {
  describe(`GET /events as a stream (${mode})`, () => {
    let dir: string | undefined;
    let db: TestDatabase | undefined;
    let databaseUrl: string;
    let server: TestServer;
    /** The server restarts in some tests (on the same database): every test uses the current one. */
    const restart = async (): Promise<void> => {
      await server.close();
      server = await startServer('listen', { ...CONFIG, databaseUrl });
    };
    before(async () => {
      if (mode === 'listen') {
        dir = mkdtempSync(join(tmpdir(), 'canon-stream-'));
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

    it('answers 200 text/event-stream, sends retry: once first, then heartbeat comments', async () => {
      const stream = await rawStream(server, ADMIN_KEY);
      try {
        assert.equal(stream.res.status, 200);
        assert.equal(stream.res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
        assert.match(stream.res.headers.get('cache-control') ?? '', /no-cache/);
        const text = await stream.read(2600);
        assert.ok(text.startsWith('retry: 200\n\n'), JSON.stringify(text.slice(0, 40)));
        assert.equal(text.match(/^retry:/gm)?.length, 1, 'retry: is sent once');
        assert.ok((text.match(/^: heartbeat\n\n/gm)?.length ?? 0) >= 2, `heartbeats every second: ${JSON.stringify(text)}`);
        assert.ok(!stream.ended, 'the stream stays open');
      } finally {
        stream.abort();
      }
    });

    it('an event written after connect arrives with id, event type and the list’s JSON; nothing written before is sent', async () => {
      const before = await createProducts(server, 1, 1);
      await listed(server, before);
      const tap = new Tap(`${server.baseUrl}/events`, ADMIN_KEY);
      try {
        await tap.opened();
        const [id] = await createProducts(server, 1, 1, { name: 'live one' });
        const event = await eventually(async () => tap.events.find((e) => e.data.data.object.id === id), 'the live event');
        const listedEvent = (await listed(server, [id!])).find((e) => e.data.object.id === id)!;
        assert.equal(event.id, listedEvent.id);
        assert.equal(event.type, 'product.created');
        assert.deepEqual(event.data, listedEvent);
        assert.equal(event.data.data.object.name, 'live one');
        assert.equal(tap.events[0]!.id, listedEvent.id, 'the first event on a stream without after is the first new one');
        assert.ok(!tap.events.some((e) => e.data.data.object.id === before[0]), 'events older than the connection are not sent');
      } finally {
        tap.close();
      }
    });

    it('?after= replays what followed and joins the live tail with nothing lost or doubled, from the ring and from the log after a restart', async () => {
      const start = await anchor(server);
      const earlier = await createProducts(server, 300, 10);
      await listed(server, earlier, start);
      // The 300 are within this process's ring of recent events: the replay is copied from it.
      const ring = new Tap(`${server.baseUrl}/events?after=${start}`, ADMIN_KEY);
      try {
        const concurrent = await createProducts(server, 50, 5);
        const expected = await listed(server, [...earlier, ...concurrent], start);
        assert.equal(expected.length, 350);
        await receivedExactly(server, ring, expected, 'replay from the ring');
        assert.equal(ring.requests.length, 1, 'one connection');
      } finally {
        ring.close();
      }
      // A new process starts with an empty ring: the replay reads the log, then joins, while 50 more are written.
      await restart();
      const log = new Tap(`${server.baseUrl}/events?after=${start}`, ADMIN_KEY);
      try {
        const concurrent = await createProducts(server, 50, 5);
        const expected = await listed(server, concurrent, start);
        assert.equal(expected.length, 400);
        await receivedExactly(server, log, expected, 'replay from the log');
      } finally {
        log.close();
      }
    });

    it('resumes with Last-Event-ID after a forced disconnect and a restart: nothing lost, nothing doubled', async () => {
      const relay = await Relay.start();
      relay.up(portOf(server));
      const start = await anchor(server);
      const tap = new Tap(`${relay.url}/events`, ADMIN_KEY);
      try {
        await tap.opened();
        const first = await createProducts(server, 20, 4);
        await eventually(async () => first.every((id) => tap.events.some((e) => e.data.data.object.id === id)), 'the first 20 live');
        const lastSeen = tap.events.at(-1)!.id;
        // Cut the connection under the client; events it misses are written meanwhile, then the server restarts.
        relay.down();
        const missed = await createProducts(server, 30, 5);
        await listed(server, missed, start);
        await restart();
        const whileDown = await createProducts(server, 10, 2);
        relay.up(portOf(server));
        const afterUp = await createProducts(server, 20, 4);
        const expected = await listed(server, [...first, ...missed, ...whileDown, ...afterUp], start);
        assert.equal(expected.length, 80);
        await receivedExactly(server, tap, expected, 'resumed stream');
        assert.ok(tap.opens >= 2, 'the client reconnected');
        assert.ok(
          tap.requests.slice(1).some((h) => h['Last-Event-ID'] === lastSeen),
          `a reconnection sent Last-Event-ID ${lastSeen}: ${JSON.stringify(tap.requests.slice(1))}`,
        );
      } finally {
        tap.close();
        await relay.close();
      }
    });

    it('a replay the store fails ends the stream instead of leaving it hanging; the client resumes', async () => {
      const start = await anchor(server);
      const later = await createProducts(server, 5, 1);
      const expected = await listed(server, later, start);
      // A new process: these events are older than its ring, so a stream after `start` replays them from the log.
      await restart();
      const store = server.runtime.store;
      const listEvents = store.listEvents;
      let calls = 0;
      // The hub's own reads of the log pass no filter; a stream's replay always does. Its first read fails.
      store.listEvents = function (this: typeof store, after, limit, filter) {
        if (filter && calls++ === 0) return Promise.reject(new Error('injected failure of the replay'));
        return listEvents.call(this, after, limit, filter);
      };
      const tap = new Tap(`${server.baseUrl}/events?after=${start}`, ADMIN_KEY);
      try {
        await receivedExactly(server, tap, expected, 'after a failed replay');
        assert.ok(calls >= 2, 'the replay was read again');
        assert.ok(tap.errors.length >= 1 && tap.opens >= 2, 'the first stream ended and the client reconnected');
      } finally {
        tap.close();
        Reflect.deleteProperty(store, 'listEvents');
      }
    });

    it('a customer’s stream carries only its own events', async () => {
      const mine = await createCustomer(server, `stream-${randomUUID()}@example.com`);
      const theirs = await createCustomer(server, `stream-other-${randomUUID()}@example.com`);
      const tap = new Tap(`${server.baseUrl}/events`, mine.key);
      try {
        await tap.opened();
        const foreign = await server.request('POST', '/v2/orders', { key: theirs.key, body: {} });
        assert.equal(foreign.status, 201);
        await createProducts(server, 3, 1);
        const own = await server.request('POST', '/v2/orders', { key: mine.key, body: {} });
        assert.equal(own.status, 201);
        await server.request('PATCH', `/v2/users/${theirs.userId}`, { body: { full_name: 'Renamed other' } });
        const sentinel = await server.request('PATCH', `/v2/users/${mine.userId}`, { body: { full_name: 'Renamed mine' } });
        assert.equal(sentinel.status, 200, sentinel.text);
        await eventually(async () => tap.events.some((e) => e.type === 'user.updated'), 'the customer’s own user.updated');
        assert.deepEqual(
          tap.events.map((e) => [e.type, e.data.data.object.id]),
          [
            ['order.created', own.body.id],
            ['user.updated', mine.userId],
          ],
        );
      } finally {
        tap.close();
      }
    });

    it('a key revoked while its stream is open ends the stream within seconds; the client cannot reconnect', async () => {
      const customer = await createCustomer(server, `revoked-${randomUUID()}@example.com`);
      const key = await server.request('POST', '/v2/api-keys', { body: { name: 'stream key', user_id: customer.userId } });
      assert.equal(key.status, 201);
      const tap = new Tap(`${server.baseUrl}/events`, key.body.key);
      try {
        await tap.opened();
        const revokedAt = Date.now();
        assert.equal((await server.request('DELETE', `/v2/api-keys/${key.body.id}`)).status, 204);
        await eventually(async () => tap.errors.length > 0, 'the stream to end', 5000);
        assert.ok(tap.errors[0]!.at - revokedAt < 3000, `ended ${tap.errors[0]!.at - revokedAt} ms after the revocation`);
        await eventually(async () => tap.errors.some((e) => e.code === 401), 'the reconnection to be refused with 401', 5000);
        assert.equal(tap.es.readyState, EventSource.CLOSED);
      } finally {
        tap.close();
      }
    });

    it('refuses an unknown Last-Event-ID with 400 INVALID_PARAMETER as JSON', async () => {
      const res = await fetch(`${server.baseUrl}/events`, { headers: { accept: 'text/event-stream', 'last-event-id': randomUUID(), 'x-api-key': ADMIN_KEY } });
      const body = await fromFetch(res);
      assert.equal(body.status, 400, body.text);
      assert.match(body.headers['content-type']!, /^application\/json/);
      const e = errorShape(body);
      assert.equal(e.code, 'INVALID_PARAMETER');
      assert.ok(
        e.details?.some((d) => d.field === 'Last-Event-ID'),
        JSON.stringify(e.details),
      );
      const unknownAfter = await fromFetch(await fetch(`${server.baseUrl}/events?after=${randomUUID()}`, { headers: { accept: 'text/event-stream', 'x-api-key': ADMIN_KEY } }));
      assert.equal(unknownAfter.status, 400);
      assert.equal(errorShape(unknownAfter).code, 'INVALID_PARAMETER');
    });

    it('refuses a stream past sseMaxStreamsPerPrincipal with 429 until one closes', async () => {
      const customer = await createCustomer(server, `streams-${randomUUID()}@example.com`);
      const streams = [];
      try {
        for (let i = 0; i < 3; i++) {
          const s = await rawStream(server, customer.key);
          streams.push(s);
          assert.equal(s.res.status, 200);
        }
        const refused = await fromFetch(await fetch(`${server.baseUrl}/events`, { headers: { accept: 'text/event-stream', 'x-api-key': customer.key } }));
        assert.equal(refused.status, 429, refused.text);
        assert.equal(errorShape(refused).code, 'RATE_LIMITED');
        assert.ok(refused.headers['retry-after']);
        // Another credential is not counted against this one.
        const admin = await rawStream(server, ADMIN_KEY);
        streams.push(admin);
        assert.equal(admin.res.status, 200);
        streams[0]!.abort();
        const again = await eventually(async () => {
          const s = await rawStream(server, customer.key);
          if (s.res.status === 200) return s;
          s.abort();
          return undefined;
        }, 'a stream once one closed');
        streams.push(again);
      } finally {
        for (const s of streams) s.abort();
      }
    });

    it('cuts off a consumer that does not read, closing its connection (memory stays bounded)', async () => {
      const slow = await startServer('listen', { ...CONFIG, databaseUrl, sseBufferBytes: 16_384 });
      const accepted: net.Socket[] = [];
      slow.app.server.on('connection', (s: net.Socket) => accepted.push(s));
      const socket = net.connect(portOf(slow), '127.0.0.1');
      let sampler: NodeJS.Timeout | undefined;
      try {
        await once(socket, 'connect');
        socket.pause();
        socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nX-Api-Key: ${ADMIN_KEY}\r\n\r\n`);
        // The head and `retry:` arrive into Node's own buffer for the socket; from then on nothing is read.
        await eventually(async () => socket.readableLength > 0, 'the stream’s head');
        const head = String(socket.read());
        assert.match(head, /^HTTP\/1\.1 200 /);
        const mine = accepted.find((s) => s.remotePort === socket.localPort)!;
        assert.ok(mine, 'the server side of the stream’s connection');
        // What the server holds queued for this client, sampled while events pile up (a burst beyond the kernel's free
        // space counts too: on PostgreSQL a batch of frames can cut it off before the kernel buffers are full).
        let most = 0;
        sampler = setInterval(() => (most = Math.max(most, mine.writableLength)), 5);
        // Loopback sockets hold about 4 MB before the server's own queue grows: updates that change a 5000-character
        // description carry it twice (object and previous_attributes), some 10 kB a frame. Writes stop once it is closed.
        const products = await createProducts(slow, 8, 8);
        let written = 0;
        const writer = async (w: number): Promise<void> => {
          for (let i = 0; i < 150 && !mine.destroyed; i++) {
            const res = await slow.request('PATCH', `/v2/products/${products[w]!}`, { body: { description: (i % 2 ? 'a' : 'b').repeat(5000) } });
            assert.equal(res.status, 200, res.text);
            written++;
          }
        };
        await Promise.all(products.map((_, w) => writer(w)));
        // Cut off at 16 KiB, ended, and (never taking what was queued) disconnected after the grace.
        await eventually(async () => mine.destroyed, 'the server to close the slow connection', 15_000);
        clearInterval(sampler);
        assert.ok(most < 16_384 + 2 * 11_000, `the server queued at most ${most} bytes for it: the allowance and a frame`);
        // The client then reads what the kernel held, and the end.
        let bytes = head.length + socket.readableLength;
        socket.on('data', (d: Buffer) => (bytes += d.length));
        socket.resume();
        await eventually(async () => socket.readableEnded || socket.destroyed, 'the client to see the end of the stream', 10_000);
        assert.ok(bytes < written * 10_500, `read ${bytes} bytes of ${written} updates`);
      } finally {
        clearInterval(sampler);
        socket.destroy();
        await slow.close();
      }
    });

    it('closing the server ends open streams', async () => {
      const closing = await startServer('listen', { ...CONFIG, databaseUrl });
      const raw = await rawStream(closing, ADMIN_KEY);
      const tap = new Tap(`${closing.baseUrl}/events`, ADMIN_KEY);
      try {
        await tap.opened();
        assert.equal(raw.res.status, 200);
        const started = Date.now();
        await closing.close();
        assert.ok(Date.now() - started < 5000, `close took ${Date.now() - started} ms`);
        await raw.read(5000);
        assert.ok(raw.ended, 'the raw stream ended');
        await eventually(async () => tap.errors.length > 0, 'the client to see its stream end');
      } finally {
        tap.close();
        raw.abort();
      }
    });
  });
}
