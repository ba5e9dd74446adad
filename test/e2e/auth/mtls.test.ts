// Mutual TLS (DESIGN §8): only a TLS-verified, registered client certificate authenticates, never a header; tls_client_auth at /oauth/token.
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { CertDir, type CertFiles } from '../../support/certs.js';
import { ADMIN_KEY, MODES, startServer, type TestServer } from '../../support/harness.js';

interface HttpsResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

interface HttpsOptions {
  /** The client certificate (and key) presented in the handshake; none when omitted. */
  cert?: CertFiles;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as is (set content-type yourself). */
  body?: unknown;
}

const REQUEST_TIMEOUT_MS = 10_000;

/** One request on a fresh TLS connection (no agent, so no connection or session is shared between certificates). */
function send(port: number, ca: string, method: string, path: string, options: HttpsOptions = {}): Promise<HttpsResponse> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let payload: string | undefined;
  if (options.body !== undefined) {
    payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    if (typeof options.body !== 'string' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers,
        ca,
        ...(options.cert ? { cert: options.cert.cert, key: options.cert.key } : {}),
        agent: false,
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const flat: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: flat, text, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out after ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The Canon error body (DESIGN §5): the code, and request_id equal to X-Request-Id. */
function expectError(res: HttpsResponse, status: number, code: string): void {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status} ${res.text}`);
  const e = res.body?.error;
  assert.ok(e && typeof e === 'object', `not an error body: ${res.text}`);
  assert.equal(e.code, code);
  assert.equal(typeof e.message, 'string');
  assert.equal(typeof e.request_id, 'string');
  assert.ok(res.headers['x-request-id'], 'X-Request-Id header missing');
  assert.equal(e.request_id, res.headers['x-request-id']);
}

function expectUnauthenticated(res: HttpsResponse): void {
  expectError(res, 401, 'UNAUTHENTICATED');
  assert.ok(res.headers['www-authenticate'], 'a 401 carries WWW-Authenticate');
}

const PRODUCT = { name: 'Certified kettle', description: 'Made over mutual TLS', price: { amount: 4200, currency: 'EUR' } };
const FORM = 'application/x-www-form-urlencoded';
const LISTEN_MODES = MODES.filter((m) => m.startsWith('listen'));

describe('mutual TLS', () => {
  let certs: CertDir;
  let ca: CertFiles;
  let serverCert: CertFiles;
  let registered: CertFiles;
  let scopedCert: CertFiles;
  let unregistered: CertFiles;
  let rogueCa: CertFiles;
  let rogue: CertFiles;

  before(() => {
    certs = new CertDir();
    ca = certs.ca('ca', 'Canon Test Client CA');
    serverCert = certs.leaf('server', 'localhost', 'server', ca);
    registered = certs.leaf('client', 'registered-client', 'client', ca);
    scopedCert = certs.leaf('scoped', 'scoped-client', 'client', ca);
    unregistered = certs.leaf('unregistered', 'unregistered-client', 'client', ca);
    rogueCa = certs.ca('rogue-ca', 'Untrusted CA');
    rogue = certs.leaf('rogue', 'registered-client', 'client', rogueCa);
  });
  after(() => certs?.remove());

  for (const mode of LISTEN_MODES) {
    describe(`over HTTPS with a client CA (${mode})`, () => {
      let server: TestServer;
      let port: number;
      let clientId: string;
      let scopedClientId: string;
      const call = (method: string, path: string, options: HttpsOptions = {}): Promise<HttpsResponse> => send(port, ca.cert, method, path, options);
      const admin = (method: string, path: string, body?: unknown): Promise<HttpsResponse> => call(method, path, { headers: { 'x-api-key': ADMIN_KEY }, body });
      const registerClient = async (name: string, extra: Record<string, unknown>): Promise<{ client_id: string; client_secret: string }> => {
        const res = await admin('POST', '/v2/oauth-clients', { name, ...extra });
        assert.equal(res.status, 201, res.text);
        assert.equal(typeof res.body.client_id, 'string');
        assert.equal(typeof res.body.client_secret, 'string');
        return res.body;
      };

      before(async () => {
        server = await startServer(mode, { tls: { certFile: serverCert.certFile, keyFile: serverCert.keyFile, clientCaFile: ca.certFile } });
        port = Number(new URL(server.baseUrl!).port);
        assert.ok(port > 0);
        const unrestricted = await registerClient('mTLS client', { certificate_sha256: registered.sha256 });
        clientId = unrestricted.client_id;
        const scoped = await registerClient('mTLS read-only client', { scopes: ['products:read'], certificate_sha256: scopedCert.sha256 });
        scopedClientId = scoped.client_id;
      });
      after(async () => server?.close());

      it('the test certificates are distinct and fingerprints are 64 lowercase hex digits', () => {
        const all = [registered, scopedCert, unregistered, rogue].map((c) => c.sha256);
        for (const f of all) assert.match(f, /^[0-9a-f]{64}$/);
        assert.equal(new Set(all).size, all.length);
      });

      it('a registered client certificate alone authenticates: list, create and read products', async () => {
        const created = await call('POST', '/v2/products', { cert: registered, body: PRODUCT });
        assert.equal(created.status, 201, created.text);
        assert.equal(created.body.name, PRODUCT.name);
        assert.equal(typeof created.body.id, 'string');

        const list = await call('GET', '/v2/products', { cert: registered });
        assert.equal(list.status, 200, list.text);
        assert.ok(Array.isArray(list.body.data));
        assert.ok(list.body.data.some((p: { id: string }) => p.id === created.body.id));

        const one = await call('GET', `/v2/products/${created.body.id}`, { cert: registered });
        assert.equal(one.status, 200, one.text);
        assert.equal(one.body.id, created.body.id);
        assert.deepEqual(one.body.price, PRODUCT.price);
      });

      it('no certificate and no other credential: 401 UNAUTHENTICATED with WWW-Authenticate', async () => {
        expectUnauthenticated(await call('GET', '/v2/products'));
        expectUnauthenticated(await call('POST', '/v2/products', { body: PRODUCT }));
      });

      it('a certificate the CA signed but no client registered: 401', async () => {
        expectUnauthenticated(await call('GET', '/v2/products', { cert: unregistered }));
        expectUnauthenticated(await call('POST', '/v2/products', { cert: unregistered, body: PRODUCT }));
      });

      it('a certificate from an untrusted CA: 401, even once its fingerprint is registered on a client', async () => {
        expectUnauthenticated(await call('GET', '/v2/products', { cert: rogue }));
        const rogueClient = await registerClient('client bound to an unverifiable certificate', { certificate_sha256: rogue.sha256 });
        expectUnauthenticated(await call('GET', '/v2/products', { cert: rogue }));
        expectUnauthenticated(await call('POST', '/v2/products', { cert: rogue, body: PRODUCT }));
        // Nor does it authenticate that client at the token endpoint.
        const token = await call('POST', '/oauth/token', {
          cert: rogue,
          headers: { 'content-type': FORM },
          body: `grant_type=client_credentials&client_id=${encodeURIComponent(rogueClient.client_id)}`,
        });
        assert.equal(token.status, 401, token.text);
        assert.equal(token.body?.error, 'invalid_client');
      });

      it('no header stands in for a certificate', async () => {
        const pem = registered.cert;
        const der = pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
        const colonFingerprint = registered.sha256.toUpperCase().match(/../g)!.join(':');
        const impersonations: Array<Record<string, string>> = [
          { 'x-client-cert': encodeURIComponent(pem) },
          { 'x-ssl-client-cert': encodeURIComponent(pem) },
          { 'ssl-client-cert': encodeURIComponent(pem) },
          { 'x-arr-clientcert': der },
          { 'x-ssl-client-fingerprint': registered.sha256 },
          { 'x-ssl-client-sha256': registered.sha256 },
          { 'x-client-cert-sha256': colonFingerprint },
          { 'x-forwarded-client-cert': `Hash=${registered.sha256};Cert="${encodeURIComponent(pem)}";Subject="CN=registered-client"` },
          { 'x-ssl-client-verify': 'SUCCESS', 'x-ssl-client-s-dn': 'CN=registered-client', 'x-ssl-client-fingerprint': registered.sha256 },
        ];
        const everything = Object.assign({}, ...impersonations) as Record<string, string>;
        for (const headers of [...impersonations, everything]) {
          expectUnauthenticated(await call('GET', '/v2/products', { headers }));
        }
        // Alongside a verified but unregistered certificate the headers change nothing either.
        expectUnauthenticated(await call('GET', '/v2/products', { cert: unregistered, headers: everything }));
        expectUnauthenticated(await call('POST', '/v2/products', { cert: unregistered, headers: everything, body: PRODUCT }));
        // Nor at the token endpoint.
        const token = await call('POST', '/oauth/token', {
          headers: { ...everything, 'content-type': FORM },
          body: `grant_type=client_credentials&client_id=${encodeURIComponent(clientId)}`,
        });
        assert.equal(token.status, 401, token.text);
        assert.equal(token.body?.error, 'invalid_client');
      });

      it("a certificate-bound client with scopes ['products:read'] may read but not write", async () => {
        const list = await call('GET', '/v2/products', { cert: scopedCert });
        assert.equal(list.status, 200, list.text);
        const write = await call('POST', '/v2/products', { cert: scopedCert, body: PRODUCT });
        expectError(write, 403, 'INSUFFICIENT_SCOPE');
      });

      it('the server metadata advertises tls_client_auth', async () => {
        const res = await call('GET', '/.well-known/oauth-authorization-server');
        assert.equal(res.status, 200, res.text);
        assert.ok(res.body.token_endpoint_auth_methods_supported.includes('tls_client_auth'), res.text);
      });

      it('POST /oauth/token accepts tls_client_auth; the token then works without a certificate', async () => {
        const res = await call('POST', '/oauth/token', {
          cert: registered,
          headers: { 'content-type': FORM },
          body: `grant_type=client_credentials&client_id=${encodeURIComponent(clientId)}`,
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(typeof res.body.access_token, 'string');
        assert.ok(res.body.access_token.length > 0);
        assert.equal(res.body.token_type, 'Bearer');
        assert.match(res.headers['cache-control'] ?? '', /\bno-store\b/);

        const wrong = await call('POST', '/oauth/token', {
          cert: registered,
          headers: { 'content-type': FORM },
          body: `grant_type=client_credentials&client_id=${encodeURIComponent(scopedClientId)}`,
        });
        assert.equal(wrong.status, 401, wrong.text);
        assert.equal(wrong.body?.error, 'invalid_client');
        assert.match(wrong.headers['cache-control'] ?? '', /\bno-store\b/);

        const unknownCert = await call('POST', '/oauth/token', {
          cert: unregistered,
          headers: { 'content-type': FORM },
          body: `grant_type=client_credentials&client_id=${encodeURIComponent(clientId)}`,
        });
        assert.equal(unknownCert.status, 401, unknownCert.text);
        assert.equal(unknownCert.body?.error, 'invalid_client');

        const withToken = await call('GET', '/v2/products', { headers: { authorization: `Bearer ${res.body.access_token}` } });
        assert.equal(withToken.status, 200, withToken.text);
        assert.ok(Array.isArray(withToken.body.data));
      });

      it('explicit credentials win over the certificate: a wrong X-API-Key or bearer token is 401', async () => {
        const badKey = await call('GET', '/v2/products', { cert: registered, headers: { 'x-api-key': 'ck_not_a_real_key_0000000000000000000000' } });
        expectUnauthenticated(badKey);
        const badKeyWrite = await call('POST', '/v2/products', { cert: registered, headers: { 'x-api-key': 'ck_not_a_real_key_0000000000000000000000' }, body: PRODUCT });
        expectUnauthenticated(badKeyWrite);
        const badBearer = await call('GET', '/v2/products', { cert: registered, headers: { authorization: 'Bearer not.a.token' } });
        expectUnauthenticated(badBearer);
      });
    });
  }
});
