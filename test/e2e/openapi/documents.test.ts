// The OpenAPI documents (issue 27.4, 27.6): served public with a strong ETag, equal to the committed copies (the drift check), valid by two validators not written here, printed by `canon openapi`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { GENEROUS_LIMITS, MODES, startServer, type TestServer } from '../../support/harness.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const REDOCLY = fileURLToPath(new URL('../../../../node_modules/@redocly/cli/bin/cli.js', import.meta.url));
const committed = (v: string): unknown => JSON.parse(readFileSync(`docs/openapi/${v}.json`, 'utf8'));

type Doc = { paths: Record<string, Record<string, { operationId: string; parameters?: Array<{ name: string; in: string }> }>>; [k: string]: unknown };

for (const mode of MODES.filter((m) => m === 'inject' || m === 'listen/postgres')) {
  describe(`OpenAPI documents (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
    });
    after(async () => server.close());

    for (const v of ['v1', 'v2']) {
      it(`GET /${v}/openapi.json: public, a strong ETag, 304 on If-None-Match, equal to docs/openapi/${v}.json`, async () => {
        const res = await server.request('GET', `/${v}/openapi.json`, { key: null });
        assert.equal(res.status, 200, res.text);
        assert.match(res.headers['content-type'] ?? '', /^application\/json/);
        assert.match(res.headers.etag ?? '', /^"[A-Za-z0-9_-]{43}"$/, 'a strong ETag');
        assert.match(res.headers['cache-control'] ?? '', /public/);
        // The drift check: regenerate with `canon openapi --version N --out docs/openapi/vN.json` when the catalog changes.
        assert.deepEqual(res.body, committed(v), `docs/openapi/${v}.json differs from what the server serves: run canon openapi --version ${v} --out docs/openapi/${v}.json`);
        const again = await server.request('GET', `/${v}/openapi.json`, { key: null, headers: { 'if-none-match': res.headers.etag! } });
        assert.equal(again.status, 304);
        assert.equal(again.text, '');
        const withKey = await server.request('GET', `/${v}/openapi.json`);
        assert.equal(withKey.headers.etag, res.headers.etag, 'the same document for every caller');
      });

      it(`GET /${v}/openapi.json compressed as asked: Brotli, then gzip, each with its own strong ETag`, async () => {
        // fetch asks for compression unless told otherwise: identity names the uncompressed bytes.
        const plain = await server.request('GET', `/${v}/openapi.json`, { key: null, headers: { 'accept-encoding': 'identity' } });
        assert.equal(plain.headers['content-encoding'], undefined);
        for (const [accept, coding] of [
          ['br, gzip', 'br'],
          ['gzip', 'gzip'],
          ['gzip;q=0, br;q=0', undefined],
        ] as const) {
          const res = await server.request('GET', `/${v}/openapi.json`, { key: null, headers: { 'accept-encoding': accept } });
          assert.equal(res.status, 200);
          assert.equal(res.headers['content-encoding'], coding, accept);
          assert.match(res.headers.vary ?? '', /Accept-Encoding/);
          if (coding) assert.notEqual(res.headers.etag, plain.headers.etag, 'a distinct validator per coding');
          // fetch decodes what it asked for; inject hands the bytes over as they came.
          if (server.mode.startsWith('listen')) assert.deepEqual(res.body, plain.body);
          const again = await server.request('GET', `/${v}/openapi.json`, { key: null, headers: { 'accept-encoding': accept, 'if-none-match': res.headers.etag! } });
          assert.equal(again.status, 304);
        }
      });
    }
  });
}

describe('OpenAPI documents: what they say', () => {
  it('each version documents its own shapes: v1 products have price_cents, v2 price; each lists only its own paths', () => {
    const v1 = committed('v1') as Doc & { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
    const v2 = committed('v2') as Doc & { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
    assert.ok('price_cents' in v1.components.schemas.Product!.properties);
    assert.ok(!('price' in v1.components.schemas.Product!.properties));
    assert.ok('price' in v2.components.schemas.Product!.properties);
    assert.ok(!('price_cents' in v2.components.schemas.Product!.properties));
    assert.ok('key' in v2.components.schemas.ApiKey!.properties, 'the revealed-once key is declared');
    assert.ok(Object.keys(v1.paths).every((p) => !p.startsWith('/v2/')));
    assert.ok(Object.keys(v2.paths).every((p) => !p.startsWith('/v1/')));
    const filters = v1.paths['/v1/products']!.get!.parameters!.map((p) => p.name);
    assert.ok(filters.includes('price_cents[gte]'), 'v1 filters in v1 names');
    assert.ok(!filters.includes('price.amount[gte]'));
    const webhooks = (v2 as unknown as { webhooks: Record<string, unknown> }).webhooks;
    assert.ok('order.paid' in webhooks && 'product.created' in webhooks, 'event types as webhooks');
  });

  it('valid by @apidevtools/swagger-parser and by redocly lint with its recommended rules', async () => {
    for (const v of ['v1', 'v2']) {
      await SwaggerParser.validate(structuredClone(committed(v)) as never);
      const lint = await run(process.execPath, [REDOCLY, 'lint', `docs/openapi/${v}.json`, '--format=summary'], { timeout: 120_000 }).catch(
        (err: { stdout?: string; stderr?: string }) => {
          throw new Error(`redocly lint docs/openapi/${v}.json failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
        },
      );
      assert.match(`${lint.stdout}${lint.stderr}`, /valid/i);
    }
  });

  it('canon openapi prints the committed document; --version 1 gives v1; an unknown version is an error', async () => {
    const v2 = await run(process.execPath, [CLI, 'openapi'], { timeout: 60_000, env: { ...process.env, DATABASE_URL: 'sqlite::memory:' } });
    assert.deepEqual(JSON.parse(v2.stdout), committed('v2'));
    const v1 = await run(process.execPath, [CLI, 'openapi', '--version', '1'], { timeout: 60_000, env: { ...process.env, DATABASE_URL: 'sqlite::memory:' } });
    assert.deepEqual(JSON.parse(v1.stdout), committed('v1'));
    await assert.rejects(run(process.execPath, [CLI, 'openapi', '--version', '9'], { timeout: 60_000 }), (err: { stderr?: string }) =>
      /no version 9: this API serves v2, v1/.test(err.stderr ?? ''),
    );
  });

  it('a listening server answers GET /vN/openapi.json on its lean path with the same bytes and headers as the route', async () => {
    const server = await startServer('listen');
    try {
      const before = server.app.fastDocuments.served;
      const lean = await fetch(`${server.baseUrl!}/v1/openapi.json`, { headers: { 'accept-encoding': 'br' } });
      const leanBytes = Buffer.from(await lean.arrayBuffer());
      assert.equal(server.app.fastDocuments.served, before + 1, 'answered before Fastify');
      // A query string sends it through Fastify's route (the lean path takes the exact path only).
      const routed = await fetch(`${server.baseUrl!}/v1/openapi.json?x`, { headers: { 'accept-encoding': 'br' } });
      assert.equal(server.app.fastDocuments.served, before + 1, 'answered by the route');
      assert.deepEqual(leanBytes, Buffer.from(await routed.arrayBuffer()));
      for (const name of ['etag', 'cache-control', 'vary', 'content-encoding', 'content-type', 'deprecation', 'sunset', 'link', 'x-content-type-options', 'x-ratelimit-limit']) {
        assert.equal(lean.headers.get(name), routed.headers.get(name), name);
      }
      assert.ok(lean.headers.get('x-request-id'));
      const notModified = await fetch(`${server.baseUrl!}/v1/openapi.json`, { headers: { 'accept-encoding': 'br', 'if-none-match': lean.headers.get('etag')! } });
      assert.equal(notModified.status, 304);
    } finally {
      await server.close();
    }
  });

  it('the lean path keeps the per-address limit: past it, 429 with Retry-After', async () => {
    const server = await startServer('listen', { rateLimits: { ...GENEROUS_LIMITS, perIp: { limit: 3, periodSeconds: 60 } } });
    try {
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 5; i++) {
        last = await fetch(`${server.baseUrl!}/v2/openapi.json`);
        statuses.push(last.status);
        await last.arrayBuffer();
      }
      assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
      assert.ok(Number(last!.headers.get('retry-after')) > 0);
      assert.ok(server.app.fastDocuments.served >= 3);
    } finally {
      await server.close();
    }
  });

  it('the documents and /docs are public but limited: anonymous requests count per client address (429 with Retry-After)', async () => {
    const server = await startServer('inject', { rateLimits: { ...GENEROUS_LIMITS, perIp: { limit: 3, periodSeconds: 60 } } });
    try {
      for (const path of ['/v2/openapi.json', '/docs', '/docs/migrations/v1-to-v2']) {
        const headers = { 'x-forwarded-for': '198.51.100.7', accept: path === '/docs' ? 'text/html' : '*/*' };
        let last = await server.request('GET', path, { key: null, headers });
        for (let i = 0; i < 5 && last.status !== 429; i++) last = await server.request('GET', path, { key: null, headers });
        assert.equal(last.status, 429, `${path}: ${last.text.slice(0, 200)}`);
        assert.ok(Number(last.headers['retry-after']) > 0);
      }
    } finally {
      await server.close();
    }
  });

  it('under the query strategy the paths carry no version and each operation takes ?version=', async () => {
    const server = await startServer('inject', { versioning: 'query' });
    try {
      const res = await server.request('GET', '/openapi.json?version=1', { key: null });
      assert.equal(res.status, 200, res.text);
      const doc = res.body as Doc;
      assert.ok(doc.paths['/products'], 'unversioned paths');
      assert.ok(doc.paths['/products']!.get!.parameters!.some((p) => p.name === 'version' && p.in === 'query'));
      assert.match(String((doc.info as { description: string }).description), /\?version=1/);
    } finally {
      await server.close();
    }
  });
});
