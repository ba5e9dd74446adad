// An open stream carries only what its principal may see as it is now: demoted, narrowed, revoked or logged out mid-stream; `after` of a hidden event; streams per user.
/* eslint-disable @typescript-eslint/no-explicit-any */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Config } from '../../../src/config/config.js';
import { eventually } from '../../support/eventually.js';
import { ADMIN_KEY, createCustomer, errorShape, fromFetch, startServer, TEST_OVERLOAD, type TestServer } from '../../support/harness.js';
import { PG_URL } from '../../support/pg.js';
import { scratchStore, type Scratch } from '../webhooks/api.js';

type Json = Record<string, any>;

/** Polls and re-checks often enough for a test's patience; a busy machine must not turn requests into overload 503s. */
const CONFIG: Partial<Config> = {
  eventPollMs: 100,
  sseHeartbeatSeconds: 1,
  sseMaxStreamsPerUser: 2,
  sqliteSynchronous: 'normal',
  overload: TEST_OVERLOAD,
};

/** A raw stream: every event parsed from its body as it arrives, and whether the server ended it. */
class RawStream {
  readonly events: Array<{ id: string; type: string; data: Json }> = [];
  ended = false;
  status = 0;
  private readonly controller = new AbortController();
  private buffer = '';

  static async open(server: TestServer, headers: Record<string, string>): Promise<RawStream> {
    const s = new RawStream();
    const res = await fetch(`${server.baseUrl}/events`, { headers: { accept: 'text/event-stream', ...headers }, signal: s.controller.signal });
    s.status = res.status;
    assert.equal(res.status, 200, await (res.status === 200 ? Promise.resolve('') : res.text()));
    void s.pump(res.body!.getReader());
    return s;
  }

  private async pump(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = this.buffer.indexOf('\n\n')) >= 0) {
          const frame = this.buffer.slice(0, end);
          this.buffer = this.buffer.slice(end + 2);
          const fields = Object.fromEntries(frame.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]));
          if (fields.data !== undefined) this.events.push({ id: fields.id!, type: fields.event!, data: JSON.parse(fields.data) as Json });
        }
      }
    } catch {
      // Aborted by the test.
    }
    this.ended = true;
  }

  /** The (type, object id) of every event received. */
  get seen(): string[] {
    return this.events.map((e) => `${e.type} ${String(e.data.data.object.id)}`);
  }

  close(): void {
    this.controller.abort();
  }
}

/** The answer to opening a stream, read whole unless it is a 200 stream (then cancelled): an unexpected stream fails, never hangs. */
async function openAttempt(server: TestServer, headers: Record<string, string>): Promise<Awaited<ReturnType<typeof fromFetch>>> {
  const res = await fetch(`${server.baseUrl}/events`, { headers: { accept: 'text/event-stream', ...headers } });
  if (res.status === 200) {
    await res.body?.cancel();
    return { status: 200, headers: {}, setCookies: [], text: '(a stream)', body: undefined };
  }
  return fromFetch(res);
}

/** A sentinel event the principal sees in any case: once it arrives, everything written before it has been judged. */
async function ownSentinel(server: TestServer, stream: RawStream, userId: string, name: string): Promise<void> {
  const res = await server.request('PATCH', `/v2/users/${userId}`, { body: { full_name: name } });
  assert.equal(res.status, 200, res.text);
  await eventually(
    async () => stream.seen.includes(`user.updated ${userId}`) && stream.events.some((e) => e.data.data.object.full_name === name),
    `the sentinel ${name}`,
    15_000,
    20,
  );
}

const MODES = ['listen', ...(PG_URL ? ['listen/postgres'] : [])];

for (const mode of MODES) {
  describe(`event visibility follows the principal as it is now (${mode})`, () => {
    let scratch: Scratch;
    let server: TestServer;
    before(async () => {
      scratch = await scratchStore(mode === 'listen' ? 'sqlite' : 'postgres');
      server = await startServer('listen', { ...CONFIG, databaseUrl: scratch.databaseUrl });
    });
    after(async () => {
      await server?.close();
      await scratch?.remove();
    });

    it('an admin demoted to customer stops receiving other principals’ events at once, on the stream it already holds', async () => {
      const admin = await createCustomer(server, `demoted-${randomUUID()}@example.com`);
      assert.equal((await server.request('PATCH', `/v2/users/${admin.userId}`, { body: { role: 'admin' } })).status, 200);
      const other = await createCustomer(server, `other-${randomUUID()}@example.com`);
      const stream = await RawStream.open(server, { 'x-api-key': admin.key });
      try {
        const before = await server.request('POST', '/v2/orders', { key: other.key, body: {} });
        assert.equal(before.status, 201);
        await eventually(async () => stream.seen.includes(`order.created ${before.body.id}`), 'the other customer’s order, while admin', 15_000, 20);
        assert.equal((await server.request('PATCH', `/v2/users/${admin.userId}`, { body: { role: 'customer' } })).status, 200);
        // Written right after the demotion's response: judged by the principal as it is now, whatever the guard's timers.
        const hidden = await server.request('POST', '/v2/orders', { key: other.key, body: {} });
        assert.equal(hidden.status, 201);
        const key = await server.request('POST', '/v2/api-keys', { body: { name: 'someone else’s key' } });
        assert.equal(key.status, 201);
        await server.request('PATCH', `/v2/users/${other.userId}`, { body: { full_name: 'Other, renamed' } });
        const own = await server.request('POST', '/v2/orders', { key: admin.key, body: {} });
        assert.equal(own.status, 201);
        await ownSentinel(server, stream, admin.userId, 'Demoted, renamed');
        const afterDemotion = stream.seen.slice(stream.seen.indexOf(`order.created ${before.body.id}`) + 1);
        assert.ok(!afterDemotion.includes(`order.created ${hidden.body.id}`), 'another customer’s order after the demotion');
        assert.ok(!afterDemotion.includes(`api_key.created ${key.body.id}`), 'an api_key.created after the demotion');
        assert.ok(!afterDemotion.includes(`user.updated ${other.userId}`), 'another user’s change (and email) after the demotion');
        assert.ok(afterDemotion.includes(`order.created ${own.body.id}`), 'its own order still arrives');
        assert.ok(!stream.ended, 'a customer still sees its own events: the stream stays open');
      } finally {
        stream.close();
      }
    });

    it('a key narrowed to products:read stops receiving order events; narrowed to nothing it is closed', async () => {
      const key = await server.request('POST', '/v2/api-keys', { body: { name: `narrowed ${randomUUID()}` } });
      assert.equal(key.status, 201);
      const customer = await createCustomer(server, `narrow-${randomUUID()}@example.com`);
      const stream = await RawStream.open(server, { 'x-api-key': key.body.key });
      try {
        const first = await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
        await eventually(async () => stream.seen.includes(`order.created ${first.body.id}`), 'an order while unrestricted', 15_000, 20);
        assert.equal((await server.request('PATCH', `/v2/api-keys/${key.body.id}`, { body: { scopes: ['products:read'] } })).status, 200);
        const refused = await server.request('GET', '/v2/orders', { key: key.body.key });
        assert.equal(refused.status, 403, refused.text);
        const hidden = await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
        assert.equal(hidden.status, 201);
        const product = await server.request('POST', '/v2/products', { body: { name: 'Seen', price: { amount: 5, currency: 'EUR' } } });
        assert.equal(product.status, 201);
        await eventually(async () => stream.seen.includes(`product.created ${product.body.id}`), 'a product after narrowing', 15_000, 20);
        assert.ok(!stream.seen.includes(`order.created ${hidden.body.id}`), 'an order after the key lost orders:read');
        // Scopes that read no resource at all: the stream has nothing left to carry and ends.
        assert.equal((await server.request('PATCH', `/v2/api-keys/${key.body.id}`, { body: { scopes: ['nothing:read'] } })).status, 200);
        await eventually(async () => stream.ended, 'the stream to end once the key may read nothing', 10_000, 20);
        // Nor may it open another, or list: 403, not an empty feed that hides the mistake.
        const again = await openAttempt(server, { 'x-api-key': key.body.key });
        assert.equal(again.status, 403, again.text);
        assert.equal(errorShape(again).code, 'INSUFFICIENT_SCOPE');
        const listed = await server.request('GET', '/events', { key: key.body.key });
        assert.equal(listed.status, 403, listed.text);
        assert.equal(errorShape(listed).code, 'INSUFFICIENT_SCOPE');
      } finally {
        stream.close();
      }
    });

    it('a password change ends the session’s stream', async () => {
      const email = `session-${randomUUID()}@example.com`;
      const customer = await createCustomer(server, email);
      const login = await server.request('POST', '/v2/sessions', { key: null, body: { email, password: 'long enough password' } });
      assert.equal(login.status, 201, login.text);
      const cookie = login.setCookies.find((c) => c.startsWith('canon_session='))!.split(';')[0]!;
      const stream = await RawStream.open(server, { cookie });
      try {
        const changed = await server.request('PUT', `/v2/users/${customer.userId}/password`, {
          key: customer.key,
          body: { current_password: 'long enough password', new_password: 'another long password' },
        });
        assert.equal(changed.status, 204, changed.text);
        await eventually(async () => stream.ended, 'the session’s stream to end', 10_000, 20);
      } finally {
        stream.close();
      }
    });

    it('after= an event the caller may not see is 400 with the same body as an unknown id, list and stream alike', async () => {
      const owner = await createCustomer(server, `hidden-${randomUUID()}@example.com`);
      const snoop = await createCustomer(server, `snoop-${randomUUID()}@example.com`);
      const order = await server.request('POST', '/v2/orders', { key: owner.key, body: {} });
      assert.equal(order.status, 201);
      const hiddenId = await eventually(
        async () => {
          const res = await server.request('GET', '/events?type=order.created&limit=100', { key: owner.key });
          return (res.body.data as Json[]).find((e) => e.data.object.id === order.body.id)?.id as string | undefined;
        },
        'the order’s event',
        15_000,
        20,
      );
      // Its owner may start after it; another customer may not learn that it exists.
      assert.equal((await server.request('GET', `/events?after=${hiddenId}`, { key: owner.key })).status, 200);
      const shapes = [];
      for (const id of [hiddenId, randomUUID()]) {
        const res = await server.request('GET', `/events?after=${id}`, { key: snoop.key });
        assert.equal(res.status, 400, res.text);
        const e = errorShape(res);
        shapes.push({ code: e.code, message: e.message, details: e.details?.map((d) => ({ field: d.field, message: d.message })) });
        const streamed = await openAttempt(server, { 'last-event-id': id, 'x-api-key': snoop.key });
        assert.equal(streamed.status, 400, streamed.text);
        shapes.push({
          code: errorShape(streamed).code,
          message: errorShape(streamed).message,
          details: errorShape(streamed).details?.map((d) => ({ field: d.field, message: d.message })),
        });
      }
      assert.deepEqual(shapes[0], shapes[2], 'after=: hidden and unknown answered alike');
      assert.deepEqual(shapes[1], shapes[3], 'Last-Event-ID: hidden and unknown answered alike');
      assert.equal(shapes[0]!.code, 'INVALID_PARAMETER');
    });

    it('caps streams per user across its credentials (429 RATE_LIMITED past sseMaxStreamsPerUser), not only per credential', async () => {
      const customer = await createCustomer(server, `capped-${randomUUID()}@example.com`);
      const second = await server.request('POST', '/v2/api-keys', { body: { name: 'second key', user_id: customer.userId } });
      const third = await server.request('POST', '/v2/api-keys', { body: { name: 'third key', user_id: customer.userId } });
      const streams: RawStream[] = [];
      try {
        streams.push(await RawStream.open(server, { 'x-api-key': customer.key }));
        streams.push(await RawStream.open(server, { 'x-api-key': second.body.key }));
        const refused = await openAttempt(server, { 'x-api-key': third.body.key });
        assert.equal(refused.status, 429, refused.text);
        assert.equal(errorShape(refused).code, 'RATE_LIMITED');
        assert.match(errorShape(refused).message, /user/);
        assert.equal(refused.headers['retry-after'], '5');
        // Another user is not counted against this one; a closed stream frees its place.
        streams.push(await RawStream.open(server, { 'x-api-key': ADMIN_KEY }));
        streams[0]!.close();
        await eventually(async () => (await openAttempt(server, { 'x-api-key': third.body.key })).status === 200 || undefined, 'a third credential’s stream once one closed');
      } finally {
        for (const s of streams) s.close();
      }
    });
  });
}
