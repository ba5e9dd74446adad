// Issue 12.2: 404, 405, OPTIONS and 401 are answered before the body is read, and unmatched requests count per IP.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, errorShape, GENEROUS_LIMITS, startServer, type TestServer } from '../../support/harness.js';

/** Not JSON at all: a parser that ran would answer 400 INVALID_JSON, so any other answer proves it did not run. */
const GARBAGE = '{"this is": not json';

for (const mode of ['inject', 'listen'] as const) {
  describe(`requests no route or credential admits are answered without parsing their body (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
    });
    after(async () => server.close());

    const send = (method: string, path: string, headers: Record<string, string> = { 'content-type': 'application/json' }, key: string | null = null) =>
      server.request(method, path, { key, headers, body: GARBAGE });

    it('an unknown path is 404 ROUTE_NOT_FOUND, whatever the body or its type', async () => {
      for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
        const res = await send('POST', '/nowhere', { 'content-type': type });
        assert.equal(res.status, 404, type);
        assert.equal(errorShape(res).code, 'ROUTE_NOT_FOUND');
      }
    });

    it('a wrong method on a known path is 405 with Allow, with an API key too', async () => {
      const res = await send('PUT', '/v2/products', { 'content-type': 'application/json' }, ADMIN_KEY);
      assert.equal(res.status, 405);
      assert.equal(errorShape(res).code, 'METHOD_NOT_ALLOWED');
      assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS, POST');
    });

    it('OPTIONS on a known path is 200 with Allow and no body; on an unknown one 404', async () => {
      const res = await send('OPTIONS', '/v2/products/0190a3c4-0000-7000-8000-000000000000');
      assert.equal(res.status, 200);
      assert.equal(res.headers.allow, 'DELETE, GET, HEAD, OPTIONS, PATCH, PUT');
      assert.equal(res.text, '');
      assert.equal((await send('OPTIONS', '/v2/nothing-here')).status, 404);
    });

    it('a write without credentials is 401 before its body is read', async () => {
      for (const [method, path] of [
        ['POST', '/v2/products'],
        ['PATCH', '/v2/products/0190a3c4-0000-7000-8000-000000000000'],
        ['PUT', '/v2/users/0190a3c4-0000-7000-8000-000000000000/password'],
        ['DELETE', '/v2/sessions/current'],
      ]) {
        const res = await send(method!, path!);
        assert.equal(res.status, 401, `${method} ${path}`);
        assert.equal(errorShape(res).code, 'UNAUTHENTICATED');
      }
    });

    it('with a credential, the same bad body on a real route is parsed and refused (the control case)', async () => {
      const res = await send('POST', '/v2/products', { 'content-type': 'application/json' }, ADMIN_KEY);
      assert.equal(res.status, 400);
      assert.equal(errorShape(res).code, 'INVALID_JSON');
    });
  });
}

describe('unmatched requests count against the per-IP limit', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('listen', { rateLimits: { ...GENEROUS_LIMITS, perIp: { limit: 3, periodSeconds: 600 } } });
  });
  after(async () => server.close());

  it('404, 405 and OPTIONS take from the IP’s budget; the next one is 429 with Retry-After', async () => {
    const answers = [];
    for (const [method, path] of [
      ['POST', '/nowhere'],
      ['DELETE', '/v2/products'],
      ['OPTIONS', '/v2/products'],
      ['POST', '/nowhere'],
    ]) {
      answers.push(await server.request(method!, path!, { key: null, headers: { 'content-type': 'application/json' }, body: GARBAGE }));
    }
    assert.deepEqual(
      answers.map((r) => r.status),
      [404, 405, 200, 429],
    );
    assert.deepEqual(
      answers.slice(0, 3).map((r) => r.headers['x-ratelimit-remaining']),
      ['2', '1', '0'],
    );
    assert.equal(errorShape(answers[3]!).code, 'RATE_LIMITED');
    assert.ok(Number(answers[3]!.headers['retry-after']) > 0);
    // An authenticated request is counted against its principal, not the exhausted IP budget.
    assert.equal((await server.request('GET', '/v2/products?limit=1')).status, 200);
  });
});

describe('a 1 MiB body to an unknown path', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('listen');
  });
  after(async () => server.close());

  it('is answered 404, and the kept-alive connection then serves the next request', async () => {
    const { port } = new URL(server.baseUrl!);
    const body = Buffer.alloc(1024 * 1024 - 16, 'x');
    const agent = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, path: string, payload?: Buffer): Promise<{ status: number; reused: boolean }> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, method, path, agent, headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {} },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode!, reused: req.reusedSocket }));
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    try {
      assert.equal((await send('POST', '/nowhere', body)).status, 404);
      const next = await send('GET', '/healthz');
      assert.equal(next.status, 200);
      assert.equal(next.reused, true, 'the same connection served the next request');
    } finally {
      agent.destroy();
    }
  });
});
