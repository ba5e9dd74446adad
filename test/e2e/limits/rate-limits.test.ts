// Rate limits end to end: headers count down, 429 with Retry-After, per IP, spoofing, global, sliding window, login, Redis away.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { RateLimits } from '../../../src/limits/rate-limiter.js';
import { createCustomer, errorShape, GENEROUS_LIMITS, startServer, type TestServer } from '../../support/harness.js';

const limits = (overrides: Partial<RateLimits>): RateLimits => ({ ...GENEROUS_LIMITS, ...overrides });

describe('rate limits', () => {
  const servers: TestServer[] = [];
  const start = async (l: Partial<RateLimits>, extra = {}): Promise<TestServer> => {
    const s = await startServer('inject', { rateLimits: limits(l), ...extra });
    servers.push(s);
    return s;
  };
  after(async () => {
    for (const s of servers) await s.close();
  });

  it('per principal: the headers count down, then 429 with Retry-After equal to the time to the next token', async () => {
    const server = await start({ perPrincipal: { limit: 5, periodSeconds: 60 } });
    const started = Math.floor(Date.now() / 1000);
    for (let left = 4; left >= 0; left--) {
      const res = await server.request('GET', '/v2/products');
      assert.equal(res.status, 200);
      assert.equal(res.headers['x-ratelimit-limit'], '5');
      assert.equal(res.headers['x-ratelimit-remaining'], String(left));
      const reset = Number(res.headers['x-ratelimit-reset']);
      // Bounded by when this answer came, not when the test began: on a loaded machine five requests can span a second.
      const answered = Math.ceil(Date.now() / 1000);
      assert.ok(reset >= started && reset <= answered + 61, `reset ${reset - started} s after the start, ${answered - started} s answered`);
    }
    const refused = await server.request('GET', '/v2/products');
    assert.equal(refused.status, 429);
    assert.equal(errorShape(refused).code, 'RATE_LIMITED');
    assert.equal(refused.headers['x-ratelimit-remaining'], '0');
    // One token every 12 s.
    const retry = Number(refused.headers['retry-after']);
    assert.ok(retry >= 11 && retry <= 13, `Retry-After ${retry}`);
    // Limits are per principal: another principal is unaffected.
    const other = await createCustomer(server, 'other-rl@example.com').catch(() => undefined);
    assert.equal(other, undefined, 'the admin is limited, so even creating a customer is refused');
  });

  it('keeps principals apart', async () => {
    const server = await start({ perPrincipal: { limit: 3, periodSeconds: 60 } });
    const customer = await createCustomer(server, 'apart@example.com');
    for (let i = 0; i < 3; i++) assert.equal((await server.request('GET', '/v2/products', { key: customer.key })).status, 200);
    assert.equal((await server.request('GET', '/v2/products', { key: customer.key })).status, 429);
    assert.equal((await server.request('GET', '/v2/products')).status, 200, 'the admin has its own bucket');
  });

  it('per IP for unauthenticated traffic, and a spoofed X-Forwarded-For is ignored', async () => {
    const server = await start({ perIp: { limit: 3, periodSeconds: 60 } });
    for (let i = 0; i < 3; i++) {
      const res = await server.request('GET', '/v2/products', { key: null, headers: { 'x-forwarded-for': `10.0.0.${i}` } });
      assert.equal(res.status, 401);
      assert.equal(res.headers['x-ratelimit-remaining'], String(2 - i));
    }
    const refused = await server.request('GET', '/v2/products', { key: null, headers: { 'x-forwarded-for': '10.9.9.9' } });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers['retry-after']) >= 19);
  });

  it('the X-Forwarded-For of a trusted proxy does decide the IP', async () => {
    const server = await start({ perIp: { limit: 1, periodSeconds: 60 } }, { trustProxy: true });
    assert.equal((await server.request('GET', '/v2/products', { key: null, headers: { 'x-forwarded-for': '192.0.2.1' } })).status, 401);
    assert.equal((await server.request('GET', '/v2/products', { key: null, headers: { 'x-forwarded-for': '192.0.2.2' } })).status, 401);
    assert.equal((await server.request('GET', '/v2/products', { key: null, headers: { 'x-forwarded-for': '192.0.2.1' } })).status, 429);
  });

  it('the global limit holds over every principal', async () => {
    const server = await start({ global: { limit: 4, periodSeconds: 60 } });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await server.request('GET', '/healthz')).status, (await server.request('GET', '/v2/products', { key: i % 2 ? null : undefined })).status);
    assert.deepEqual(
      statuses.filter((s) => s !== 200 && s !== 401),
      [429],
      `statuses ${statuses.join(',')}`,
    );
    assert.equal((await server.request('GET', '/healthz')).headers['x-ratelimit-limit'], undefined, 'health checks are not limited');
  });

  it('sliding window by configuration', async () => {
    const server = await start({ algorithm: 'sliding-window', perPrincipal: { limit: 2, periodSeconds: 30 } });
    assert.equal((await server.request('GET', '/v2/products')).status, 200);
    assert.equal((await server.request('GET', '/v2/products')).status, 200);
    const refused = await server.request('GET', '/v2/products');
    assert.equal(refused.status, 429);
    const retry = Number(refused.headers['retry-after']);
    assert.ok(retry >= 29 && retry <= 30, `Retry-After ${retry}`);
  });

  it('login is stricter: per account and per IP', async () => {
    const server = await start({ loginPerAccount: { limit: 3, periodSeconds: 300 }, loginPerIp: { limit: 5, periodSeconds: 60 } });
    await createCustomer(server, 'guess@example.com');
    await createCustomer(server, 'second@example.com');
    const login = (email: string, password: string) => server.request('POST', '/v2/sessions', { key: null, body: { email, password } });
    for (let i = 0; i < 3; i++) assert.equal((await login('guess@example.com', `wrong ${i}`)).status, 401);
    const locked = await login('guess@example.com', 'long enough password');
    assert.equal(locked.status, 429, 'the right password does not pass a locked account');
    assert.equal(errorShape(locked).code, 'RATE_LIMITED');
    assert.equal((await login('second@example.com', 'long enough password')).status, 201, 'another account is unaffected');
    assert.equal((await login('second@example.com', 'x')).status, 401);
    const byIp = await login('third@example.com', 'x');
    assert.equal(byIp.status, 429, 'the IP has used its 5 attempts');
  });

  it('fails open to per-process limits when Redis is unreachable, and says so in /readyz', async () => {
    const server = await start({ perPrincipal: { limit: 2, periodSeconds: 60 } }, { redisUrl: 'redis://127.0.0.1:1' });
    assert.equal((await server.request('GET', '/v2/products')).status, 200);
    assert.equal((await server.request('GET', '/v2/products')).status, 200);
    assert.equal((await server.request('GET', '/v2/products')).status, 429, 'still limited, per process');
    const ready = await server.request('GET', '/readyz', { key: null });
    assert.equal(ready.status, 200);
    assert.equal(ready.body.status, 'degraded');
    assert.equal(ready.body.checks.redis, 'unreachable');
    assert.match(ready.body.notes[0], /per process/);
  });
});
