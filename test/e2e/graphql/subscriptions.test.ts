// GraphQL subscriptions over SSE read by graphql-sse's own client against a listening server, on both stores: the same log, visibility, resumption, caps and revocation as REST's /events stream.
/* eslint-disable @typescript-eslint/no-explicit-any */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createClient, type Client, type ExecutionResult } from 'graphql-sse';
import type { Config } from '../../../src/config/config.js';
import { eventually } from '../../support/eventually.js';
import { ADMIN_KEY, createCustomer, createProduct, errorShape, fromFetch, MODES, startServer, TEST_OVERLOAD, type TestServer } from '../../support/harness.js';
import { startRelay } from '../../support/relay.js';
import { gql } from './support.js';

const CONFIG: Partial<Config> = { eventPollMs: 100, sseRetryMs: 200, sseHeartbeatSeconds: 1, sseMaxStreamsPerPrincipal: 2, overload: TEST_OVERLOAD };

const EVENT = 'id type sequence createdAt apiVersion objectId resource data previousAttributes';

/** One subscription through graphql-sse's client: what it received, whether it completed or failed. */
class Sub {
  readonly results: ExecutionResult<any>[] = [];
  completed = false;
  error: unknown;
  connected = 0;
  private readonly dispose: () => void;

  constructor(
    readonly client: Client,
    query: string,
    variables: Record<string, unknown> = {},
  ) {
    this.dispose = client.subscribe(
      { query, variables },
      {
        next: (r) => void this.results.push(r as ExecutionResult<any>),
        error: (e) => void (this.error = e),
        complete: () => void (this.completed = true),
      },
      { connected: () => void this.connected++ },
    );
  }

  /** The events received, in order. */
  get events(): any[] {
    return this.results.filter((r) => r.data).map((r) => Object.values(r.data as Record<string, any>)[0]);
  }

  opened(): Promise<unknown> {
    return eventually(async () => this.connected > 0 || this.completed || this.error !== undefined, 'the subscription to connect', 5000);
  }

  ended(): Promise<unknown> {
    return eventually(async () => this.completed || this.error !== undefined, 'the subscription to end', 5000);
  }

  close(): void {
    this.dispose();
    this.client.dispose();
  }
}

function client(url: string, key: string, options: { lastEventId?: () => string | undefined; retryAttempts?: number } = {}): Client {
  return createClient({
    url: `${url}/graphql`,
    fetchFn: fetch,
    retryAttempts: options.retryAttempts ?? 5,
    // Reconnect at once, not after graphql-sse's seconds of backoff: the test's patience is bounded.
    retry: () => new Promise((resolve) => setTimeout(resolve, 50)),
    headers: () => {
      const last = options.lastEventId?.();
      return { 'x-api-key': key, ...(last ? { 'last-event-id': last } : {}) };
    },
  });
}

/** GET /events after a position, every page: what the log holds for this caller. */
async function restEvents(server: TestServer, afterId: string | undefined, key = ADMIN_KEY, type?: string): Promise<any[]> {
  const out: any[] = [];
  let query = `limit=100${afterId ? `&after=${afterId}` : ''}${type ? `&type=${type}` : ''}`;
  for (let page = 0; page < 50; page++) {
    const res = await server.request('GET', `/events?${query}`, { key });
    assert.equal(res.status, 200, res.text);
    out.push(...res.body.data);
    if (!res.body.pagination.has_more) return out;
    query = `limit=100&cursor=${res.body.pagination.next_cursor}${type ? `&type=${type}` : ''}`;
  }
  throw new Error('more than 50 pages of events');
}

async function lastEventId(server: TestServer): Promise<string | undefined> {
  return (await restEvents(server, undefined)).at(-1)?.id;
}

/** A raw SSE request, read until `until` matches the text or the bound passes; then cut. */
async function rawStream(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  until: RegExp,
  timeoutMs = 5000,
): Promise<{ status: number; headers: Headers; text: string }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    let text = '';
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        if (until.test(text)) break;
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
    return { status: res.status, headers: res.headers, text };
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`GraphQL subscriptions over SSE (${mode})`, () => {
    let server: TestServer;
    let url: string;
    before(async () => {
      server = await startServer(mode, CONFIG);
      url = server.baseUrl!;
    });
    after(() => server.close());

    it('delivers events written by REST and by GraphQL mutations after subscribing, each as GET /events renders it', async () => {
      const sub = new Sub(client(url, ADMIN_KEY), `subscription { events(types: ["product.*"]) { ${EVENT} } }`);
      try {
        await sub.opened();
        const start = await lastEventId(server);
        const product = await createProduct(server, { name: 'Subscribed' });
        const created = await gql(server, 'mutation { createProduct(input: {name: "By GraphQL", price: {amount: 500, currency: "EUR"}}) { id } }');
        assert.equal(created.errors, undefined, JSON.stringify(created.errors));
        const patched = await server.request('PATCH', `/v2/products/${product.id}`, { body: { name: 'Renamed' } });
        assert.equal(patched.status, 200);
        await eventually(async () => sub.events.length >= 3, 'three product events', 10_000);
        const rest = (await restEvents(server, start)).filter((e) => e.type.startsWith('product.'));
        assert.deepEqual(
          sub.events.map((e) => [e.type, e.objectId]),
          [
            ['product.created', product.id],
            ['product.created', created.data.createProduct.id],
            ['product.updated', product.id],
          ],
        );
        assert.deepEqual(
          sub.events,
          rest.map((e) => ({
            id: e.id,
            type: e.type,
            sequence: e.sequence,
            createdAt: e.created_at,
            apiVersion: e.api_version,
            objectId: e.data.object.id,
            resource: 'products',
            data: e.data,
            previousAttributes: e.previous_attributes ?? null,
          })),
        );
        assert.equal(sub.completed, false);
        assert.equal(sub.error, undefined);
      } finally {
        sub.close();
      }
    });

    it('frames each event as graphql-sse’s next with the event’s SSE id, and resumes after Last-Event-ID', async () => {
      const start = await lastEventId(server);
      const products = [await createProduct(server, { name: 'one' }), await createProduct(server, { name: 'two' })];
      const query = { query: 'subscription ($after: String) { events(after: $after, types: ["product.created"]) { id objectId } }', variables: { after: start } };
      const first = await rawStream(url, query, { 'x-api-key': ADMIN_KEY }, /event: next[^]*event: next/);
      assert.equal(first.status, 200);
      assert.equal(first.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(first.headers.get('cache-control'), 'no-cache, no-store');
      const frames = [...first.text.matchAll(/id: (\S+)\nevent: next\ndata: (.*)\n\n/g)].map((m) => [m[1], JSON.parse(m[2]!)]);
      assert.equal(frames.length, 2, first.text);
      assert.deepEqual(
        frames.map(([id, data]) => [data.data.events.objectId, data.data.events.id === id]),
        products.map((p) => [p.id, true]),
      );
      assert.match(first.text, /^retry: 200\n\n/);
      // The header wins over `after`, as on REST: the stream resumes after the first event.
      const resumed = await rawStream(url, query, { 'x-api-key': ADMIN_KEY, 'last-event-id': String(frames[0]![0]) }, /event: next/);
      const again = [...resumed.text.matchAll(/id: (\S+)\nevent: next\n/g)].map((m) => m[1]);
      assert.deepEqual(again, [frames[1]![0]]);
      // An id no kept event has is a field error in the stream, then complete (nothing else is sent).
      const unknown = await rawStream(url, query, { 'x-api-key': ADMIN_KEY, 'last-event-id': randomUUID() }, /event: complete/);
      assert.equal(unknown.status, 200);
      const [, data] = /event: next\ndata: (.*)\n/.exec(unknown.text)!;
      const answer = JSON.parse(data!);
      assert.equal(answer.errors[0].extensions.code, 'INVALID_PARAMETER');
      assert.deepEqual(answer.errors[0].path, ['events']);
      assert.equal(answer.errors[0].extensions.details[0].field, 'Last-Event-ID');
    });

    it('a customer sees only its own objects’ events, and another’s order is NOT_FOUND', async () => {
      const mine = await createCustomer(server, `sub-mine-${randomUUID()}@example.com`);
      const theirs = await createCustomer(server, `sub-theirs-${randomUUID()}@example.com`);
      const foreign = await server.request('POST', '/v2/orders', { key: theirs.key, body: {} });
      assert.equal(foreign.status, 201);
      const sub = new Sub(client(url, mine.key), `subscription { events { type objectId } }`);
      const other = new Sub(client(url, mine.key), `subscription ($id: ID!) { orderEvents(id: $id) { type } }`, { id: foreign.body.id });
      try {
        await sub.opened();
        await other.ended();
        assert.equal(other.results.length, 1);
        assert.equal(onlyCode(other.results[0]!), 'NOT_FOUND');
        await server.request('POST', '/v2/orders', { key: theirs.key, body: {} });
        await server.request('PATCH', `/v2/users/${theirs.userId}`, { body: { full_name: 'Other renamed' } });
        const own = await server.request('POST', '/v2/orders', { key: mine.key, body: {} });
        await server.request('PATCH', `/v2/users/${mine.userId}`, { body: { full_name: 'Mine renamed' } });
        await eventually(async () => sub.events.some((e) => e.type === 'user.updated'), 'the customer’s own user.updated', 10_000);
        assert.deepEqual(
          sub.events.map((e) => [e.type, e.objectId]),
          [
            ['order.created', own.body.id],
            ['user.updated', mine.userId],
          ],
        );
      } finally {
        sub.close();
        other.close();
      }
    });

    it('orderEvents(id:) carries that order’s events only', async () => {
      const customer = await createCustomer(server, `sub-order-${randomUUID()}@example.com`);
      const a = await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
      const b = await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
      const sub = new Sub(client(url, customer.key), `subscription ($id: ID!) { orderEvents(id: $id) { type objectId } }`, { id: a.body.id });
      try {
        await sub.opened();
        assert.equal((await server.request('POST', `/v2/orders/${b.body.id}/cancel`, { key: customer.key })).status, 200);
        assert.equal((await server.request('POST', `/v2/orders/${a.body.id}/cancel`, { key: customer.key })).status, 200);
        await eventually(async () => sub.events.length > 0, 'the order’s event', 10_000);
        assert.deepEqual(sub.events, [{ type: 'order.cancelled', objectId: a.body.id }]);
      } finally {
        sub.close();
      }
    });

    it('resumes after a cut connection with none lost and none twice (compared with GET /events)', async () => {
      const relay = await startRelay();
      relay.retarget(url);
      const start = await lastEventId(server);
      // The client's headers are asked for at every (re)connection: the last event received is its Last-Event-ID.
      const holder: { sub?: Sub } = {};
      const sub = new Sub(
        client(relay.url, ADMIN_KEY, { lastEventId: () => holder.sub?.events.at(-1)?.id }),
        'subscription ($after: String) { events(after: $after, types: ["product.*"]) { id type } }',
        { after: start },
      );
      holder.sub = sub;
      const seen = (): string[] => sub.events.map((e) => e.id as string);
      try {
        await sub.opened();
        for (let i = 0; i < 5; i++) await createProduct(server, { name: `before cut ${i}` });
        await eventually(async () => seen().length >= 3, 'some events before the cut', 10_000);
        relay.retarget(url); // cuts the open connection; the client reconnects through it with Last-Event-ID
        for (let i = 0; i < 5; i++) await createProduct(server, { name: `after cut ${i}` });
        // On PostgreSQL an event is numbered just after its commit, off the request path: the feed may lag the answer.
        let expected: string[] = [];
        await eventually(
          async () => {
            expected = (await restEvents(server, start, ADMIN_KEY, 'product.*')).map((e) => e.id);
            return expected.length >= 10;
          },
          'all ten events in GET /events',
          15_000,
        );
        // An earlier test's event numbered after `start` was read would be in both lists alike.
        assert.ok(expected.length >= 10, `${expected.length} events`);
        await eventually(async () => seen().length >= expected.length, 'all ten events', 15_000);
        assert.deepEqual(seen(), expected);
        assert.ok(sub.connected >= 2, `connected ${sub.connected} times`);
      } finally {
        sub.close();
        await relay.close();
      }
    });

    it('refuses an unknown event type as a field error, INVALID_QUERY naming it, then completes', async () => {
      const sub = new Sub(client(url, ADMIN_KEY), 'subscription { events(types: ["order.paid", "order.exploded"]) { id } }');
      try {
        await sub.ended();
        assert.equal(sub.completed, true);
        assert.equal(sub.results.length, 1);
        const error = (sub.results[0]!.errors as any[])[0];
        assert.equal(error.extensions.code, 'INVALID_QUERY');
        assert.deepEqual(error.path, ['events']);
        assert.deepEqual(error.extensions.details, [{ field: 'types.1', message: 'names no declared event type', value: 'order.exploded' }]);
        assert.equal(sub.results[0]!.data, undefined);
      } finally {
        sub.close();
      }
    });

    it('ends a subscription whose key is revoked: a last UNAUTHENTICATED result, then complete', async () => {
      const customer = await createCustomer(server, `sub-revoked-${randomUUID()}@example.com`);
      const key = await server.request('POST', '/v2/api-keys', { body: { name: 'subscription key', user_id: customer.userId } });
      const sub = new Sub(client(url, key.body.key), 'subscription { events { id } }');
      try {
        await sub.opened();
        const revokedAt = Date.now();
        assert.equal((await server.request('DELETE', `/v2/api-keys/${key.body.id}`)).status, 204);
        await sub.ended();
        assert.ok(Date.now() - revokedAt < 3000, `ended ${Date.now() - revokedAt} ms after the revocation`);
        assert.equal(sub.completed, true);
        assert.equal(onlyCode(sub.results.at(-1)!), 'UNAUTHENTICATED');
        assert.equal(sub.connected, 1);
      } finally {
        sub.close();
      }
    });

    it('counts subscriptions with REST’s streams against the same cap: past it, 429 RATE_LIMITED before the stream starts', async () => {
      const customer = await createCustomer(server, `sub-cap-${randomUUID()}@example.com`);
      const rest = new AbortController();
      const sub = new Sub(client(url, customer.key), 'subscription { events { id } }');
      try {
        const restStream = await fetch(`${url}/events`, { headers: { accept: 'text/event-stream', 'x-api-key': customer.key }, signal: rest.signal });
        assert.equal(restStream.status, 200);
        await sub.opened();
        const refused = await fromFetch(
          await fetch(`${url}/graphql`, {
            method: 'POST',
            headers: { accept: 'text/event-stream', 'content-type': 'application/json', 'x-api-key': customer.key },
            body: JSON.stringify({ query: 'subscription { events { id } }' }),
          }),
        );
        assert.equal(refused.status, 429, refused.text);
        assert.equal(errorShape(refused).code, 'RATE_LIMITED');
        assert.equal(refused.headers['retry-after'], '5');
        // graphql-sse's client sees the refusal as the response it is.
        const third = new Sub(client(url, customer.key, { retryAttempts: 0 }), 'subscription { events { id } }');
        await third.ended();
        assert.equal((third.error as { response?: Response }).response?.status, 429);
        third.close();
        // A query over SSE needs no stream slot: one next, then complete.
        const query = new Sub(client(url, customer.key), '{ orders(first: 1) { totalCount } }');
        await query.ended();
        assert.deepEqual(query.results, [{ data: { orders: { totalCount: 0 } } }]);
        assert.equal(query.completed, true);
        query.close();
      } finally {
        rest.abort();
        sub.close();
      }
    });
  });
}

/** The code of a result's one error. */
function onlyCode(result: ExecutionResult<any>): string {
  const errors = result.errors as any[] | undefined;
  assert.equal(errors?.length, 1, JSON.stringify(result));
  return errors![0].extensions.code;
}

for (const mode of MODES) {
  describe(`GraphQL subscriptions by plain JSON are refused (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode, CONFIG);
    });
    after(() => server.close());

    it('a subscription over JSON POST or GET is NOT_ACCEPTABLE and runs nothing', async () => {
      const modern = await server.request('POST', '/graphql', {
        headers: { accept: 'application/graphql-response+json' },
        body: { query: 'subscription { events { id } }' },
      });
      assert.equal(modern.status, 406);
      assert.match(modern.headers['content-type']!, /^application\/graphql-response\+json/);
      assert.deepEqual(Object.keys(modern.body), ['errors']);
      assert.equal(modern.body.errors[0].extensions.code, 'NOT_ACCEPTABLE');
      assert.match(modern.body.errors[0].message, /text\/event-stream/);
      const legacy = await server.request('POST', '/graphql', { body: { query: 'subscription { events { id } }' } });
      assert.equal(legacy.status, 200);
      assert.deepEqual(Object.keys(legacy.body), ['errors']);
      assert.equal(legacy.body.errors[0].extensions.code, 'NOT_ACCEPTABLE');
      const byGet = await server.request('GET', `/graphql?query=${encodeURIComponent('subscription { events { id } }')}`);
      assert.equal(byGet.status, 200);
      assert.equal(byGet.body.errors[0].extensions.code, 'NOT_ACCEPTABLE');
    });

    it('a mutation sent for a stream by GET is 405 in the uniform error body, and runs nothing', async () => {
      const res = await server.request('GET', `/graphql?query=${encodeURIComponent('mutation { createProduct(input: {name: "x"}) { id } }')}`, {
        headers: { accept: 'text/event-stream' },
      });
      assert.equal(res.status, 405, res.text);
      assert.equal(errorShape(res).code, 'METHOD_NOT_ALLOWED');
      assert.equal(res.headers.allow, 'POST');
    });
  });
}
