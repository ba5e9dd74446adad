// Issue 26.5 (DESIGN §9): /metrics needs the metrics:read scope (admins hold it), is rate-limited, names no principal; CANON_METRICS_LISTEN serves it alone to an operator's address.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { fromEnv, listenAddress } from '../../../src/config/config.js';
import { Browser } from '../auth/browser.js';
import { ADMIN_KEY, createCustomer, createProduct, errorShape, GENEROUS_LIMITS, MODES, startServer, type TestServer } from '../../support/harness.js';

const PASSWORD = 'long enough password';

/** An API key with these scopes, acting as admin (no user) or for `userId`. */
async function key(server: TestServer, scopes: string[], userId?: string): Promise<{ id: string; key: string }> {
  const res = await server.request('POST', '/v2/api-keys', { body: { name: `scopes ${scopes.join(' ') || 'none'}`, scopes, ...(userId ? { user_id: userId } : {}) } });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, key: res.body.key };
}

async function user(server: TestServer, email: string, role: 'admin' | 'customer'): Promise<string> {
  const res = await server.request('POST', '/v2/users', { body: { email, full_name: email, password: PASSWORD, role } });
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

async function token(server: TestServer, scopes: string[], scope?: string): Promise<{ status: number; token?: string; error?: string }> {
  const client = await server.request('POST', '/v2/oauth-clients', { body: { name: 'scraper', scopes } });
  assert.equal(client.status, 201, client.text);
  const basic = Buffer.from(`${client.body.client_id}:${client.body.client_secret}`).toString('base64');
  const res = await server.request('POST', '/oauth/token', {
    key: null,
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: `grant_type=client_credentials${scope ? `&scope=${encodeURIComponent(scope)}` : ''}`,
  });
  return { status: res.status, token: res.body?.access_token, error: res.body?.error };
}

for (const mode of MODES.filter((m) => m.startsWith('inject'))) {
  describe(`GET /metrics: who may read it (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
    });
    after(async () => server.close());

    it('without credentials, or with bad ones: 401 UNAUTHENTICATED with WWW-Authenticate, and no metrics', async () => {
      for (const k of [null, 'ck_not_a_real_key_000000000000']) {
        const res = await server.request('GET', '/metrics', { key: k });
        assert.equal(res.status, 401, res.text);
        assert.equal(errorShape(res).code, 'UNAUTHENTICATED');
        assert.ok(res.headers['www-authenticate'], 'WWW-Authenticate');
        assert.doesNotMatch(res.text, /canon_/);
      }
      const head = await server.request('HEAD', '/metrics', { key: null });
      assert.equal(head.status, 401);
      assert.equal(head.text, '');
    });

    it('an admin key, and an admin user’s session: 200, the Prometheus text', async () => {
      const res = await server.request('GET', '/metrics');
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers['content-type']!, /^text\/plain; version=0\.0\.4/);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(res.text, /^# TYPE canon_events_written_total counter$/m);
      await user(server, 'metrics-admin@example.com', 'admin');
      const browser = new Browser(server);
      assert.equal((await browser.login('metrics-admin@example.com', PASSWORD)).status, 201);
      const viaSession = await browser.request('GET', '/metrics');
      assert.equal(viaSession.status, 200, viaSession.text);
      assert.match(viaSession.text, /canon_api_requests_total/);
    });

    it('a customer’s key and a customer’s session (no scopes: all their role allows) are 403 FORBIDDEN', async () => {
      const customer = await createCustomer(server, 'metrics-customer@example.com');
      const viaKey = await server.request('GET', '/metrics', { key: customer.key });
      assert.equal(viaKey.status, 403, viaKey.text);
      assert.equal(errorShape(viaKey).code, 'FORBIDDEN');
      assert.doesNotMatch(viaKey.text, /canon_/);
      const browser = new Browser(server);
      assert.equal((await browser.login('metrics-customer@example.com', PASSWORD)).status, 201);
      const viaSession = await browser.request('GET', '/metrics');
      assert.equal(viaSession.status, 403, viaSession.text);
      assert.equal(errorShape(viaSession).code, 'FORBIDDEN');
    });

    it('a credential restricted to other scopes is 403 INSUFFICIENT_SCOPE naming metrics:read; `*` keeps an admin key’s', async () => {
      const narrow = await key(server, ['products:read']);
      const res = await server.request('GET', '/metrics', { key: narrow.key });
      assert.equal(res.status, 403, res.text);
      assert.equal(errorShape(res).code, 'INSUFFICIENT_SCOPE');
      assert.match(res.headers['www-authenticate']!, /error="insufficient_scope"/);
      assert.match(res.headers['www-authenticate']!, /scope="metrics:read"/);
      const star = await key(server, ['*']);
      assert.equal((await server.request('GET', '/metrics', { key: star.key })).status, 200);
    });

    it('a key with only metrics:read reads the metrics and nothing else; so does a customer’s key given it', async () => {
      const scraper = await key(server, ['metrics:read']);
      assert.equal((await server.request('GET', '/metrics', { key: scraper.key })).status, 200);
      const products = await server.request('GET', '/v2/products', { key: scraper.key });
      assert.equal(products.status, 403, products.text);
      assert.equal(errorShape(products).code, 'INSUFFICIENT_SCOPE');
      // Its scopes read no resource: /events says so (403) rather than answering an empty feed.
      const events = await server.request('GET', '/events?limit=100', { key: scraper.key });
      assert.equal(events.status, 403, events.text);
      assert.equal(errorShape(events).code, 'INSUFFICIENT_SCOPE');
      const monitor = await createCustomer(server, 'metrics-monitor@example.com');
      const given = await key(server, ['metrics:read'], monitor.userId);
      assert.equal((await server.request('GET', '/metrics', { key: given.key })).status, 200);
    });

    it('an OAuth client may be given metrics:read (Prometheus’s own oauth2 scrape setting); one without it may not ask for it', async () => {
      const granted = await token(server, ['metrics:read'], 'metrics:read');
      assert.equal(granted.status, 200);
      const res = await server.request('GET', '/metrics', { key: null, headers: { authorization: `Bearer ${granted.token}` } });
      assert.equal(res.status, 200, res.text);
      const refused = await token(server, ['products:read'], 'metrics:read');
      assert.equal(refused.status, 400);
      assert.equal(refused.error, 'invalid_scope');
      const metadata = await server.request('GET', '/.well-known/oauth-authorization-server', { key: null });
      assert.ok((metadata.body.scopes_supported as string[]).includes('metrics:read'));
    });

    it('the catalog says so: authentication required, admins, the metrics:read scope, and the 401/403/429 it answers', async () => {
      const op = server.runtime.catalog.operations.find((o) => o.id === 'metrics')!;
      assert.equal(op.authentication, 'required');
      assert.deepEqual(op.grants, ['admin']);
      assert.deepEqual(op.scopes, ['metrics:read']);
      for (const code of ['UNAUTHENTICATED', 'FORBIDDEN', 'INSUFFICIENT_SCOPE', 'RATE_LIMITED'] as const) assert.ok(op.errors.includes(code), code);
    });
  });
}

/** Reads pino's lines as they are written. */
function capture(): Writable & { lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return Object.assign(out, { lines });
}

describe('/metrics names no principal: callers of a deprecated version go to the log', () => {
  let server: TestServer;
  const log = capture();
  before(async () => {
    server = await startServer('inject', { logLevel: 'info' }, undefined, undefined, { logger: true, logDestination: log });
  });
  after(async () => server.close());

  it('counts v1 requests per version only, and logs each caller once', async () => {
    const product = await createProduct(server);
    const caller = await key(server, []);
    const metric = async (name: string, labels: string): Promise<number> => {
      const text = (await server.request('GET', '/metrics')).text;
      const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = await metric('canon_deprecated_api_requests_total', 'version="v1"');
    for (let i = 0; i < 3; i++) assert.equal((await server.request('GET', `/v1/products/${product.id}`, { key: caller.key })).status, 200);
    assert.equal((await server.request('GET', '/v1/products?limit=1', { key: caller.key })).status, 200);
    assert.equal(await metric('canon_deprecated_api_requests_total', 'version="v1"'), before + 4);
    const text = (await server.request('GET', '/metrics')).text;
    assert.doesNotMatch(text, /principal=/);
    assert.ok(!text.includes(caller.id), 'no credential id in the metrics');
    assert.ok(!text.includes(ADMIN_KEY));
    const logged = log.lines.filter((l) => l.msg === 'deprecated API version in use' && l.principal === `api_key:${caller.id}`);
    assert.equal(logged.length, 1, JSON.stringify(logged));
    assert.equal(logged[0]!.api_version, 'v1');
  });
});

describe('/metrics is rate-limited like everything else', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('inject', {
      rateLimits: { ...GENEROUS_LIMITS, perIp: { limit: 3, periodSeconds: 3600 }, perPrincipal: { limit: 4, periodSeconds: 3600 } },
    });
  });
  after(async () => server.close());

  it('anonymous requests count per address (401, then 429); a scraper’s count per principal (200, then 429)', async () => {
    const anonymous = [];
    for (let i = 0; i < 5; i++) anonymous.push((await server.request('GET', '/metrics', { key: null })).status);
    assert.deepEqual(anonymous, [401, 401, 401, 429, 429]);
    const scraper = await key(server, ['metrics:read']);
    const scrapes = [];
    for (let i = 0; i < 6; i++) {
      const res = await server.request('GET', '/metrics', { key: scraper.key });
      scrapes.push(res.status);
      if (res.status === 429) {
        assert.equal(errorShape(res).code, 'RATE_LIMITED');
        assert.ok(Number(res.headers['retry-after']) > 0);
      } else assert.equal(res.headers['x-ratelimit-limit'], '4');
    }
    assert.deepEqual(scrapes, [200, 200, 200, 200, 429, 429]);
  });
});

describe('CANON_METRICS_LISTEN: the metrics alone on an operator’s address', () => {
  let server: TestServer;
  let url: string;
  before(async () => {
    server = await startServer('listen', {
      metricsListen: { host: '127.0.0.1', port: 0 },
      rateLimits: { ...GENEROUS_LIMITS, perIp: { limit: 5, periodSeconds: 3600 } },
    });
    url = server.runtime.metricsUrl!;
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  });
  after(async () => server.close());

  it('the main listener’s /metrics still needs the scope', async () => {
    const res = await fetch(`${server.baseUrl}/metrics`);
    assert.equal(res.status, 401);
    assert.equal((await fetch(`${server.baseUrl}/metrics`, { headers: { 'x-api-key': ADMIN_KEY } })).status, 200);
  });

  it('serves GET and HEAD /metrics without credentials; nothing else; counted per address', async () => {
    const res = await fetch(`${url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('x-ratelimit-limit'), '5');
    assert.match(await res.text(), /^canon_event_streams \d+$/m);
    const head = await fetch(`${url}/metrics?x=1`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    const other = await fetch(`${url}/v2/products`, { headers: { 'x-api-key': ADMIN_KEY } });
    assert.equal(other.status, 404);
    const body = (await other.json()) as { error: { code: string; request_id: string } };
    assert.equal(body.error.code, 'ROUTE_NOT_FOUND');
    assert.equal(body.error.request_id, other.headers.get('x-request-id'));
    const post = await fetch(`${url}/metrics`, { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    assert.equal(((await post.json()) as { error: { code: string } }).error.code, 'METHOD_NOT_ALLOWED');
    // One anonymous request on the main listener and four here from this address (one budget per client
    // address, whichever listener): the sixth is over the per-IP limit.
    const limited = await fetch(`${url}/metrics`);
    assert.equal(limited.status, 429);
    assert.equal(((await limited.json()) as { error: { code: string } }).error.code, 'RATE_LIMITED');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
  });

  it('an address already in use fails the start with a clear error', async () => {
    const port = Number(new URL(url).port);
    await assert.rejects(startServer('inject', { metricsListen: { host: '127.0.0.1', port } }), /CANON_METRICS_LISTEN: cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/);
  });
});

describe('CANON_METRICS_LISTEN parsing', () => {
  it('takes host:port, an IPv6 host in brackets', () => {
    assert.deepEqual(listenAddress('127.0.0.1:9464', 'X'), { host: '127.0.0.1', port: 9464 });
    assert.deepEqual(listenAddress('[::1]:9464', 'X'), { host: '::1', port: 9464 });
    assert.deepEqual(listenAddress('localhost:0', 'X'), { host: 'localhost', port: 0 });
    assert.deepEqual(fromEnv({ CANON_METRICS_LISTEN: '0.0.0.0:9464' }).metricsListen, { host: '0.0.0.0', port: 9464 });
    assert.equal(fromEnv({}).metricsListen, undefined);
  });
  it('refuses anything else with a message naming the variable and the form', () => {
    for (const bad of ['9464', ':9464', '127.0.0.1', '127.0.0.1:99999', '127.0.0.1:-1', 'http://127.0.0.1:9464', '::1:9464', '[::1]', 'a b:1']) {
      assert.throws(() => fromEnv({ CANON_METRICS_LISTEN: bad }), /^Error: CANON_METRICS_LISTEN must be host:port, such as 127\.0\.0\.1:9464/, bad);
    }
  });
});
