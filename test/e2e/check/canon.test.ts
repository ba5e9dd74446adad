// `canon check` against Canon itself (issue 30): a listening Canon, over HTTPS, versions 1 and 2, passes every rule.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OPENAPI_LOCATIONS } from '../../../src/check/discovery.js';
import { parseCheckArgs } from '../../../src/check/options.js';
import { runCheck } from '../../../src/check/runner.js';
import type { CheckOptions, Report } from '../../../src/check/types.js';
import { CertDir, type CertFiles } from '../../support/certs.js';
import { ADMIN_KEY, GENEROUS_LIMITS, startServer, type TestServer } from '../../support/harness.js';

const PRODUCTS = 7;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Setup goes through inject: the test's own fetch would not trust the test CA. */
async function inject(server: TestServer, method: 'GET' | 'POST', url: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await server.app.inject({
    method,
    url,
    headers: { 'x-api-key': ADMIN_KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { payload: JSON.stringify(body) } : {}),
  });
  return { status: res.statusCode, json: res.body ? JSON.parse(res.body) : undefined };
}

async function seed(server: TestServer): Promise<void> {
  for (let i = 0; i < PRODUCTS; i++) {
    const res = await inject(server, 'POST', '/v2/products', { name: `Product ${i}`, description: 'for canon check', price: { amount: 100 + i, currency: 'EUR' } });
    assert.equal(res.status, 201);
  }
  assert.equal((await inject(server, 'POST', '/v2/users', { email: 'checked@example.com', full_name: 'Checked User', password: 'long enough password' })).status, 201);
}

describe('canon check on Canon', () => {
  const certs = new CertDir();
  let ca: CertFiles;
  let server: TestServer;
  let limited: TestServer;

  before(async () => {
    ca = certs.ca('ca', 'canon check test CA');
    const leaf = certs.leaf('server', 'localhost', 'server', ca);
    server = await startServer('listen', { tls: { certFile: leaf.certFile, keyFile: leaf.keyFile, clientCaFile: undefined } });
    await seed(server);
    // A small per-principal budget, so that a bounded burst meets the limit.
    limited = await startServer('listen', { rateLimits: { ...GENEROUS_LIMITS, perPrincipal: { limit: 20, periodSeconds: 60 } } });
    await seed(limited);
  });
  after(async () => {
    await server?.close();
    await limited?.close();
    certs.remove();
  });

  const check = (base: string, extra: string[]): Promise<Report> =>
    runCheck({ ...(parseCheckArgs([base, '--header', `X-API-Key: ${ADMIN_KEY}`, '--rate', '400', ...extra]) as CheckOptions), ca: ca.cert });

  it('passes every rule over HTTPS on both versions, writes included, and leaves nothing behind', async () => {
    // No --path: discovery reads Canon's OpenAPI documents, and takes collections from v2 and v1 in turn.
    const report = await check(server.baseUrl!.replace(/^http:/, 'https:'), ['--write']);
    const notPassed = report.rules.filter((r) => r.status !== 'pass').map((r) => `${r.id} ${r.status}: ${r.summary}`);
    // The checker does not log in, so it sees no cookie; the burst runs in the next test.
    assert.deepEqual(notPassed, [
      'transport.cookies not-applicable: no response set a cookie (the checker does not log in)',
      'ratelimit.429 not-applicable: runs only with --burst N (it sends N requests to provoke a 429)',
    ]);
    assert.equal(report.discovery.openapi, '/v2/openapi.json, /v1/openapi.json');
    assert.deepEqual(report.discovery.collections, ['/events', '/v2/users', '/v1/users', '/v2/products', '/v1/products', '/v2/orders']);
    assert.ok(report.requests <= 300, `${report.requests} requests`);
    // Version 1 is deprecated (DESIGN §10): the rule saw it and followed its notice.
    assert.match(report.rules.find((r) => r.id === 'versioning.deprecation')!.summary, /^deprecated: v1;/);
    // Every object the write rules created was deleted again.
    assert.ok(report.cleanup.length >= 6);
    for (const e of report.cleanup) assert.equal(e.status, 204, `${e.request} ${e.note}`);
    const left = await inject(server, 'GET', '/v2/products?offset=0&limit=1');
    assert.equal(left.json.pagination.total, PRODUCTS);
  });

  it('meets the rate limit with a bounded burst: 429 with Retry-After', async () => {
    const report = await check(limited.baseUrl!, ['--path', '/v2/products', '--only', 'ratelimit', '--burst', '40']);
    assert.deepEqual(
      report.rules.map((r) => [r.id, r.status]),
      [
        ['ratelimit.headers', 'pass'],
        ['ratelimit.429', 'pass'],
      ],
    );
    const burst = report.rules[1]!;
    assert.match(burst.summary, /^429 after \d+ requests, Retry-After \d+$/);
    // The OpenAPI probes of discovery, the list, one item, and the burst (at most 40).
    assert.ok(report.requests <= OPENAPI_LOCATIONS.length + 2 + 40, `${report.requests} requests`);
  });
});
