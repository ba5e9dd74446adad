// canon-client under failure (issue 28.4, DESIGN §7, §11): a fault-injecting proxy drops connections or answers 503/409/429 for the first tries; POSTs create exactly once, Retry-After is honoured, other 4xx and unsafe PATCHes are not retried, attempts and total time are bounded.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, startServer, type Mode, type TestServer } from '../support/harness.js';
import { PG_URL } from '../support/pg.js';
import { errorBody, faultProxy, type Fault } from './proxy.js';
import { canon } from './support.js';
import type * as Retry from '../../packages/client/dist/retry.js';

const { createClient, CanonError, CanonNetworkError, responseOf } = canon;
const retry: typeof Retry = await import(new URL('../../../packages/client/dist/retry.js', import.meta.url).href);
const MODES: Mode[] = ['listen', ...(PG_URL ? (['listen/postgres'] as const) : [])];
/** Short waits, so a test of four tries takes milliseconds; the bounds under test are set per case. */
const FAST = { baseDelayMs: 20, maxDelayMs: 5000, maxElapsedMs: 20_000 };

for (const mode of MODES) {
  describe(`canon-client retries through a fault-injecting proxy (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
    });
    after(async () => server.close());

    /** How many products a search finds: the proof that a POST created once. */
    const created = async (name: string): Promise<number> => (await server.request('GET', `/v2/products?q=${encodeURIComponent(name)}&limit=100`)).body.data.length;

    it('a POST whose first two tries reach the server but lose the answer creates exactly one object, replayed to the third', async () => {
      const proxy = await faultProxy(server.baseUrl!, (req, n) => (req.method === 'POST' && n <= 2 ? 'drop-after' : 'pass'));
      try {
        const c = createClient({ baseUrl: proxy.url, apiKey: ADMIN_KEY, retries: FAST });
        const p = await c.products.create({ name: 'Dropped twice', price: { amount: 100, currency: 'EUR' } });
        assert.equal(p.name, 'Dropped twice');
        assert.equal(responseOf(p)?.status, 201);
        assert.equal(responseOf(p)?.replayed, true, 'Idempotent-Replayed: the first try’s answer');
        assert.equal(proxy.seen.length, 3);
        assert.ok(proxy.seen[0]!.key, 'an Idempotency-Key');
        assert.ok(
          proxy.seen.every((s) => s.key === proxy.seen[0]!.key),
          'the same key on every try',
        );
        assert.equal(await created('Dropped twice'), 1);
      } finally {
        await proxy.close();
      }
    });

    it('a POST answered 503 (Retry-After: 1) then dropped before the server saw it creates exactly once, after waiting what Retry-After asked', async () => {
      const proxy = await faultProxy(server.baseUrl!, (_req, n) =>
        n === 1 ? { status: 503, headers: { 'retry-after': '1' }, body: errorBody('SERVICE_UNAVAILABLE') } : n === 2 ? 'drop-before' : 'pass',
      );
      try {
        const c = createClient({ baseUrl: proxy.url, apiKey: ADMIN_KEY, retries: FAST });
        const p = await c.products.create({ name: 'Unavailable once', price: { amount: 100, currency: 'EUR' } });
        assert.equal(responseOf(p)?.replayed, false, 'the third try was the first to reach the server');
        assert.equal(proxy.seen.length, 3);
        assert.ok(proxy.seen[1]!.at - proxy.seen[0]!.at >= 990, `waited ${proxy.seen[1]!.at - proxy.seen[0]!.at} ms after Retry-After: 1`);
        assert.equal(await created('Unavailable once'), 1);
      } finally {
        await proxy.close();
      }
    });

    it('409 IDEMPOTENCY_KEY_IN_USE is retried under the same key; the action runs once', async () => {
      const c0 = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY });
      const user = await c0.users.create({ email: `busy-${mode.replace('/', '-')}@example.com`, full_name: 'Busy', password: 'long enough password' });
      const order = await c0.users.orders(user.id!).create({});
      const proxy = await faultProxy(server.baseUrl!, (req, n) => (req.url!.endsWith('/cancel') && n <= 2 ? { status: 409, body: errorBody('IDEMPOTENCY_KEY_IN_USE') } : 'pass'));
      try {
        const c = createClient({ baseUrl: proxy.url, apiKey: ADMIN_KEY, retries: FAST });
        assert.equal((await c.orders.cancel(order.id!)).status, 'cancelled');
        assert.equal(proxy.seen.length, 3);
        assert.equal(new Set(proxy.seen.map((s) => s.key)).size, 1);
      } finally {
        await proxy.close();
      }
    });

    it('a connection that never answers: CanonNetworkError after `attempts` tries, nothing created', async () => {
      const proxy = await faultProxy(server.baseUrl!, () => 'drop-before');
      try {
        const c = createClient({ baseUrl: proxy.url, apiKey: ADMIN_KEY, retries: { ...FAST, attempts: 3 } });
        await assert.rejects(c.products.create({ name: 'Never arrives', price: { amount: 1, currency: 'EUR' } }), (err: unknown) => {
          assert.ok(err instanceof CanonNetworkError);
          assert.equal(err.attempts, 3);
          assert.match(err.message, /got no answer after 3 tries/);
          return true;
        });
        assert.equal(proxy.seen.length, 3);
        assert.equal(await created('Never arrives'), 0);
      } finally {
        await proxy.close();
      }
    });
  });
}

describe('canon-client retries: what is and is not tried again', () => {
  let server: TestServer;
  let productId: string;
  before(async () => {
    server = await startServer('listen');
    productId = (await server.request('POST', '/v2/products', { body: { name: 'Target', price: { amount: 100, currency: 'EUR' } } })).body.id;
  });
  after(async () => server.close());

  /** A client through a proxy with `plan`, the proxy's record, and a way to close it. */
  const through = async (plan: (req: IncomingMessage, n: number) => Fault, retries: Record<string, number> = FAST) => {
    const proxy = await faultProxy(server.baseUrl!, plan);
    return { proxy, c: createClient({ baseUrl: proxy.url, apiKey: ADMIN_KEY, retries }) };
  };

  it('other 4xx and 500 are answered at once: one try each', async () => {
    const { proxy, c } = await through((_req, n) => (n === 2 ? { status: 500, body: errorBody('INTERNAL_ERROR') } : 'pass'));
    try {
      await assert.rejects(c.products.create({ name: '' } as never), { name: 'CanonError', status: 422, code: 'VALIDATION_ERROR', attempts: 1 });
      await assert.rejects(c.products.get(productId), { name: 'CanonError', status: 500, code: 'INTERNAL_ERROR', attempts: 1 });
      assert.equal(proxy.seen.length, 2);
    } finally {
      await proxy.close();
    }
  });

  it('answers that are not Canon’s: a proxy’s 502 page is HTTP_502 (not retried), a 2xx that is not JSON is INVALID_RESPONSE', async () => {
    const { proxy, c } = await through((_req, n) =>
      n === 1
        ? { status: 502, headers: { 'content-type': 'text/html' }, body: '<h1>Bad gateway</h1>' }
        : { status: 200, headers: { 'content-type': 'text/html' }, body: '<p>hello</p>' },
    );
    try {
      await assert.rejects(c.products.get(productId), { name: 'CanonError', status: 502, code: 'HTTP_502', attempts: 1 });
      await assert.rejects(c.products.get(productId), { name: 'CanonError', status: 200, code: 'INVALID_RESPONSE', message: /not JSON \(text\/html\)/ });
    } finally {
      await proxy.close();
    }
  });

  it('a redirect is not followed: the credential never goes where it points (REDIRECT, one try)', async () => {
    const { proxy, c } = await through(() => ({ status: 302, headers: { location: 'https://elsewhere.example/steal' } }));
    try {
      await assert.rejects(c.products.get(productId), {
        name: 'CanonError',
        status: 302,
        code: 'REDIRECT',
        attempts: 1,
        message: /redirected to https:\/\/elsewhere\.example\/steal/,
      });
      await assert.rejects(c.products.create({ name: 'x', price: { amount: 1, currency: 'EUR' } }), { name: 'CanonError', code: 'REDIRECT' });
      assert.equal(proxy.seen.length, 2);
    } finally {
      await proxy.close();
    }
  });

  it('429 with an HTTP-date Retry-After waits until that date (measured on the answer’s own Date)', async () => {
    const { proxy, c } = await through((_req, n) => {
      if (n > 1) return 'pass';
      // The server's clock is an hour ahead of ours: the wait is measured between its Date and its Retry-After.
      const served = Math.floor(Date.now() / 1000) * 1000 + 3_600_000;
      return {
        status: 429,
        headers: { date: new Date(served).toUTCString(), 'retry-after': new Date(served + 1000).toUTCString() },
        body: errorBody('RATE_LIMITED'),
      };
    });
    try {
      assert.equal((await c.products.get(productId)).id, productId);
      assert.equal(proxy.seen.length, 2);
      const waited = proxy.seen[1]!.at - proxy.seen[0]!.at;
      assert.ok(waited >= 990 && waited < 3000, `waited ${waited} ms`);
    } finally {
      await proxy.close();
    }
  });

  it('a Retry-After beyond maxDelayMs ends the retries at once: the 503 stands, with what it asked for', async () => {
    const { proxy, c } = await through(() => ({ status: 503, headers: { 'retry-after': '120' }, body: errorBody('SERVICE_UNAVAILABLE') }));
    try {
      await assert.rejects(c.products.get(productId), { name: 'CanonError', status: 503, attempts: 1, retryAfterMs: 120_000 });
      assert.equal(proxy.seen.length, 1);
    } finally {
      await proxy.close();
    }
  });

  it('maxElapsedMs bounds the total time: no wait starts that would end past it', async () => {
    const { proxy, c } = await through(() => ({ status: 503, body: errorBody('SERVICE_UNAVAILABLE') }), { attempts: 10, baseDelayMs: 400, maxDelayMs: 400, maxElapsedMs: 300 });
    try {
      const started = Date.now();
      await assert.rejects(c.products.get(productId), (err: unknown) => err instanceof CanonError && err.status === 503);
      assert.ok(Date.now() - started < 1000, 'given up well before ten tries');
      assert.ok(proxy.seen.length < 10);
    } finally {
      await proxy.close();
    }
  });

  it('PATCH after a lost answer: not sent again without If-Match; with it, the repeat meets 412 instead of applying twice', async () => {
    // The first PATCH of each call loses its answer: the first call's only try, the second call's first.
    const { proxy, c } = await through((req) => (req.method === 'PATCH' && proxy.seen.filter((s) => s.method === 'PATCH').length <= 2 ? 'drop-after' : 'pass'));
    try {
      await assert.rejects(c.products.update(productId, { description: 'once' }), (err: unknown) => err instanceof CanonNetworkError && err.attempts === 1);
      assert.equal(proxy.seen.length, 1, 'not retried: a PATCH is not idempotent');
      const current = await c.products.get(productId);
      assert.equal(current.description, 'once', 'the lost try did apply');
      await assert.rejects(c.products.update(productId, { description: 'twice' }, { ifMatch: responseOf(current)!.etag! }), (err: unknown) => {
        assert.ok(err instanceof CanonError);
        assert.equal(err.status, 412);
        assert.equal(err.attempts, 2, 'sent again, refused by its condition');
        return true;
      });
      assert.equal((await c.products.get(productId)).description, 'twice', 'applied once, by the first try');
    } finally {
      await proxy.close();
    }
  });

  it('PUT is sent again after a lost answer; a DELETE whose lost try deleted reads the 404 of its repeat as done', async () => {
    const doomed = (await server.request('POST', '/v2/products', { body: { name: 'Doomed', price: { amount: 1, currency: 'EUR' } } })).body.id as string;
    const { proxy, c } = await through((req) =>
      (req.method === 'PUT' || req.method === 'DELETE') && proxy.seen.filter((s) => s.method === req.method).length === 1 ? 'drop-after' : 'pass',
    );
    try {
      const put = await c.products.replace(productId, { name: 'Target', price: { amount: 200, currency: 'EUR' } });
      assert.equal(put.price?.amount, 200);
      assert.equal(await c.products.delete(doomed), undefined);
      assert.deepEqual(
        proxy.seen.map((s) => s.method),
        ['PUT', 'PUT', 'DELETE', 'DELETE'],
      );
      assert.equal((await server.request('GET', `/v2/products/${doomed}`)).status, 404);
      // Without a lost try, a 404 is an error as ever.
      await assert.rejects(c.products.delete(doomed), { name: 'CanonError', status: 404 });
    } finally {
      await proxy.close();
    }
  });

  it('an abort during a backoff wait ends the call at once with the abort’s reason', async () => {
    const { proxy, c } = await through(() => ({ status: 503, headers: { 'retry-after': '3' }, body: errorBody('SERVICE_UNAVAILABLE') }));
    try {
      const controller = new AbortController();
      const started = Date.now();
      setTimeout(() => controller.abort(new Error('stop')), 100);
      await assert.rejects(c.products.get(productId, { signal: controller.signal }), { message: 'stop' });
      assert.ok(Date.now() - started < 1000);
      assert.equal(proxy.seen.length, 1);
    } finally {
      await proxy.close();
    }
  });

  it('a try that takes longer than timeoutMs counts as a network failure and is tried again', async () => {
    // A server that leaves the first request unanswered and answers the second.
    let seen = 0;
    const hang = createServer((_req, res) => {
      if (++seen === 1) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: productId, links: [] }));
    });
    await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
    try {
      const c = createClient({ baseUrl: `http://127.0.0.1:${(hang.address() as AddressInfo).port}`, apiKey: ADMIN_KEY, retries: FAST, timeoutMs: 200 });
      const started = Date.now();
      assert.equal((await c.products.get(productId)).id, productId);
      assert.equal(seen, 2);
      assert.ok(Date.now() - started >= 200);
    } finally {
      hang.closeAllConnections();
      await new Promise<void>((resolve) => hang.close(() => resolve()));
    }
  });
});

describe('canon-client retry policy (src/retry.ts)', () => {
  it('Retry-After: delay-seconds, an HTTP-date against the answer’s Date or now, nothing for garbage (RFC 9110 §10.2.3)', () => {
    const now = Date.parse('2026-11-21T10:00:00Z');
    assert.equal(retry.retryAfterMs('3', null, now), 3000);
    assert.equal(retry.retryAfterMs('Sat, 21 Nov 2026 10:00:05 GMT', null, now), 5000);
    assert.equal(retry.retryAfterMs('Sat, 21 Nov 2026 10:00:05 GMT', 'Sat, 21 Nov 2026 10:00:04 GMT', now), 1000);
    assert.equal(retry.retryAfterMs('Sat, 21 Nov 2026 09:00:00 GMT', null, now), 0, 'a date in the past: at once');
    assert.equal(retry.retryAfterMs('soon', null, now), undefined);
    assert.equal(retry.retryAfterMs(null, null, now), undefined);
  });

  it('full jitter: a uniform draw below base·2^(n−1), capped at maxDelayMs', () => {
    const policy = retry.retryPolicy({ baseDelayMs: 100, maxDelayMs: 1000 });
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((n) => retry.backoffDelay(n, policy, () => 0.999999)),
      [99, 199, 399, 799, 999, 999],
    );
    assert.equal(
      retry.backoffDelay(3, policy, () => 0),
      0,
    );
    assert.deepEqual(retry.retryPolicy(), { attempts: 4, baseDelayMs: 500, maxDelayMs: 20_000, maxElapsedMs: 60_000 }, 'attempts counts the first try (DESIGN §7)');
    assert.throws(() => retry.retryPolicy({ attempts: 0 }), /attempts must be an integer of at least 1/);
    assert.throws(() => createClient({ baseUrl: 'http://127.0.0.1:1', retries: { maxDelayMs: -1 } }), /maxDelayMs/);
  });

  it('which answers are retried, and which unanswered methods', () => {
    assert.deepEqual(
      [429, 503, 500, 502, 400, 404, 412, 422].map((s) => retry.retryableAnswer(s, 'X')),
      [true, true, false, false, false, false, false, false],
    );
    assert.equal(retry.retryableAnswer(409, 'IDEMPOTENCY_KEY_IN_USE'), true);
    assert.equal(retry.retryableAnswer(409, 'INVALID_STATE'), false);
    assert.deepEqual(
      ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'].map((m) => retry.retryableUnanswered(m, false)),
      [true, true, true, true, false],
    );
    assert.equal(retry.retryableUnanswered('PATCH', true), true);
  });
});
