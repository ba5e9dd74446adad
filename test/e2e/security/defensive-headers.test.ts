// Issue 12.8: nosniff on every response, HSTS with TLS or in production, owner-only database files, one Idempotency-Key per request.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveConfig } from '../../../src/config/config.js';
import { DEFAULT_HSTS } from '../../../src/http/transport/security-headers.js';
import { commerce } from '../../../examples/commerce/index.js';
import { createRuntime } from '../../../src/runtime/compose.js';
import { ADMIN_KEY, createProduct, errorShape, GENEROUS_LIMITS, MODES, startServer, TEST_PASSWORD_COST, type Response, type TestServer } from '../../support/harness.js';
import { CertDir } from '../../support/certs.js';

/** Sends raw bytes and returns the response head, for what no HTTP client will send. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
    socket.end(text);
  });
}

const PRODUCT = { name: 'Sniffed', price: { amount: 100, currency: 'EUR' } };

for (const mode of MODES) {
  describe(`every response carries X-Content-Type-Options: nosniff (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode, { rateLimits: { ...GENEROUS_LIMITS, perIp: { limit: 5, periodSeconds: 600 } } });
    });
    after(async () => server.close());

    it('successes, validators, errors and refusals alike', async () => {
      const product = await createProduct(server);
      const fastBefore = server.app.fastReads.served;
      const one = await server.request('GET', `/v2/products/${product.id}`);
      const answers: Array<[string, Response]> = [
        ['201 create', await server.request('POST', '/v2/products', { body: PRODUCT })],
        ['200 object', one],
        ['304 object', await server.request('GET', `/v2/products/${product.id}`, { headers: { 'if-none-match': one.headers.etag! } })],
        ['200 list', await server.request('GET', '/v2/products?limit=1')],
        ['204 delete', await server.request('DELETE', `/v2/products/${(await createProduct(server)).id}`)],
        ['200 options', await server.request('OPTIONS', '/v2/products', { key: null })],
        ['200 healthz', await server.request('GET', '/healthz', { key: null })],
        ['400 json', await server.request('POST', '/v2/products', { body: '{', headers: { 'content-type': 'application/json' } })],
        ['401', await server.request('GET', '/v2/products', { key: 'ck_not_a_real_key_000000000000000000' })],
        ['404 object', await server.request('GET', `/v2/products/${randomUUID()}`)],
        ['404 route', await server.request('GET', '/nowhere', { key: null })],
        ['405', await server.request('PATCH', '/v2/products', { key: null })],
        ['406', await server.request('GET', '/v2/products', { headers: { accept: 'text/html' } })],
        ['413', await server.request('POST', '/v2/products', { body: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }), headers: { 'content-type': 'application/json' } })],
        ['415', await server.request('POST', '/v2/products', { body: 'x', headers: { 'content-type': 'text/plain' } })],
        ['422', await server.request('POST', '/v2/products', { body: {} })],
        ['400 oauth', await server.request('POST', '/oauth/token', { key: null, body: 'grant_type=password', headers: { 'content-type': 'application/x-www-form-urlencoded' } })],
        // The address's five anonymous requests (OPTIONS, 401, 404, 405, the token endpoint) are spent.
        ['429', await server.request('GET', '/nowhere', { key: null })],
      ];
      for (const [label, res] of answers) assert.equal(res.headers['x-content-type-options'], 'nosniff', `${label}: ${res.status}`);
      assert.deepEqual(
        answers.map(([label, res]) => [label, res.status]).filter(([label, status]) => !String(label).startsWith(String(status))),
        [],
        'each answer is the status its label names',
      );
      if (mode.startsWith('listen')) assert.ok(server.app.fastReads.served > fastBefore, 'the lean read path answered some of them');
      // No Strict-Transport-Security in development over plain HTTP.
      for (const [, res] of answers) assert.equal(res.headers['strict-transport-security'], undefined);
    });

    if (mode.startsWith('listen')) {
      it('Node’s own framing errors (malformed request, oversized headers) too', async () => {
        const port = Number(new URL(server.baseUrl!).port);
        const malformed = await raw(port, 'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n');
        assert.match(malformed, /^HTTP\/1\.1 400 /);
        assert.match(malformed, /\r\nx-content-type-options: nosniff\r\n/i);
        const huge = await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40 * 1024)}\r\n\r\n`);
        assert.match(huge, /^HTTP\/1\.1 431 /);
        assert.match(huge, /\r\nx-content-type-options: nosniff\r\n/i);
      });
    }
  });
}

describe('Strict-Transport-Security', () => {
  it('is sent in production (behind a TLS proxy) on every answer, and CANON_HSTS can change or drop it', async () => {
    const production = await startServer('inject', { production: true });
    try {
      for (const res of [await production.request('GET', '/v2/products?limit=1'), await production.request('GET', '/nowhere', { key: null })]) {
        assert.equal(res.headers['strict-transport-security'], DEFAULT_HSTS);
      }
    } finally {
      await production.close();
    }
    const custom = await startServer('inject', { production: true, hsts: 'max-age=63072000; includeSubDomains; preload' });
    const off = await startServer('inject', { production: true, hsts: 'off' });
    try {
      assert.equal((await custom.request('GET', '/healthz', { key: null })).headers['strict-transport-security'], 'max-age=63072000; includeSubDomains; preload');
      assert.equal((await off.request('GET', '/healthz', { key: null })).headers['strict-transport-security'], undefined);
    } finally {
      await custom.close();
      await off.close();
    }
  });

  it('is sent when Canon serves HTTPS itself', async () => {
    const certs = new CertDir();
    const ca = certs.ca('ca', 'HSTS test CA');
    const leaf = certs.leaf('server', 'localhost', 'server', ca);
    const server = await startServer('listen', { tls: { certFile: leaf.certFile, keyFile: leaf.keyFile, clientCaFile: undefined } });
    try {
      const port = Number(new URL(server.baseUrl!).port);
      const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const req = httpsRequest({ host: '127.0.0.1', servername: 'localhost', port, path: '/healthz', ca: ca.cert }, (res) => {
          res.resume();
          resolve(res.headers);
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(headers['strict-transport-security'], DEFAULT_HSTS);
      assert.equal(headers['x-content-type-options'], 'nosniff');
    } finally {
      await server.close();
      certs.remove();
    }
  });
});

describe('a new SQLite database and its data directory are owner-only', () => {
  const dir = mkdtempSync(join(tmpdir(), 'canon-perm-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('0700 for the directory Canon creates, 0600 for the database, its WAL and shared memory, and the generated admin key', async () => {
    const data = join(dir, 'data');
    const config = resolveConfig({ databaseUrl: `sqlite:${join(data, 'canon.db')}`, seed: false, passwordCost: TEST_PASSWORD_COST, logLevel: 'silent' });
    const runtime = await createRuntime(config, { logger: false, appDef: commerce });
    try {
      await runtime.store.transaction(async () => undefined);
      const mode = (name: string): string => (statSync(join(data, name)).mode & 0o777).toString(8);
      assert.equal((statSync(data).mode & 0o777).toString(8), '700');
      for (const file of ['canon.db', 'canon.db-wal', 'canon.db-shm', '.dev-admin-key']) assert.equal(mode(file), '600', file);
    } finally {
      await runtime.close();
    }
  });
});

for (const mode of ['inject', 'listen'] as const) {
  describe(`two Idempotency-Key headers in one request (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
    });
    after(async () => server.close());

    it('are 400, not merged into one key, and nothing is created', async () => {
      const name = `twice-${randomUUID()}`;
      const body = JSON.stringify({ ...PRODUCT, name });
      let res: { status: number; text: string };
      if (mode === 'inject') {
        const answer = await server.app.inject({
          method: 'POST',
          url: '/v2/products',
          headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json', 'idempotency-key': ['one', 'two'] },
          payload: body,
        });
        res = { status: answer.statusCode, text: answer.body };
      } else {
        const port = Number(new URL(server.baseUrl!).port);
        const head = await raw(
          port,
          `POST /v2/products HTTP/1.1\r\nHost: x\r\nX-API-Key: ${ADMIN_KEY}\r\nContent-Type: application/json\r\nIdempotency-Key: one\r\nidempotency-key: two\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        res = { status: Number(head.slice(9, 12)), text: head.slice(head.indexOf('\r\n\r\n') + 4) };
      }
      assert.equal(res.status, 400, res.text);
      const error = JSON.parse(res.text).error;
      assert.equal(error.code, 'BAD_REQUEST');
      assert.equal(error.details[0].field, 'Idempotency-Key');
      const list = await server.request('GET', '/v2/products?limit=100&sort=-created_at');
      assert.ok(!list.body.data.some((p: { name: string }) => p.name === name));
      // One header with that joined value is an ordinary key.
      const joined = await server.request('POST', '/v2/products', { headers: { 'idempotency-key': 'one, two' }, body: { ...PRODUCT, name } });
      assert.equal(joined.status, 201);
      assert.equal(
        errorShape(await server.request('POST', '/v2/products', { headers: { 'idempotency-key': 'one, two' }, body: { ...PRODUCT, name: 'other' } })).code,
        'IDEMPOTENCY_KEY_REUSED',
      );
    });
  });
}
