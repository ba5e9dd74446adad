// Responses compressed per Accept-Encoding (issue 31.5): each coding round-trips to the same JSON, Vary, ETags distinct per coding, 304 per coding, If-Match with either tag, the threshold, HEAD, and the event stream never buffered.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { ADMIN_KEY, MODES, createProduct, startServer, type TestServer } from '../../support/harness.js';
import { rawRequest, type RawAnswer } from '../../support/raw-http.js';

type Raw = RawAnswer;

/** One request, its body as sent on the wire: inject's raw payload, or a socket read without any decoding. */
async function raw(server: TestServer, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Raw> {
  const all: Record<string, string> = { 'x-api-key': ADMIN_KEY, ...headers };
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined) all['content-type'] = 'application/json';
  if (server.baseUrl === undefined) {
    const res = await server.app.inject({ method: method as 'GET', url: path, headers: all, ...(payload !== undefined ? { payload } : {}) });
    const flat: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
    return { status: res.statusCode, headers: flat, bytes: res.rawPayload };
  }
  return rawRequest(`${server.baseUrl}${path}`, method, all, payload);
}

function decoded(r: Raw): string {
  const coding = r.headers['content-encoding'];
  const bytes = coding === 'gzip' ? gunzipSync(r.bytes) : coding === 'br' ? brotliDecompressSync(r.bytes) : r.bytes;
  return bytes.toString('utf8');
}

/** `"7-v2ud"` → `"7-v2ud+gz"` (W/ kept): what the server sends for a coded representation. */
function coded(etag: string, suffix: '+gz' | '+br'): string {
  return `${etag.slice(0, -1)}${suffix}"`;
}

const LONG = 'A dark roast from Minas Gerais, ground for espresso and sold in a resealable one kilogram bag. '.repeat(20);

for (const mode of MODES) {
  describe(`response compression (${mode})`, () => {
    let server: TestServer;
    let big: string;
    let small: string;
    const page = '/v2/products?limit=20';
    before(async () => {
      server = await startServer(mode, { worker: 'off' });
      big = (await createProduct(server, { name: 'Big', description: LONG })).id;
      small = (await createProduct(server, { name: 'Small', description: 'short' })).id;
      for (let i = 0; i < 12; i++) await createProduct(server, { name: `Filler ${i}`, description: 'A product to make the page longer than the threshold.' });
    });
    after(async () => server.close());

    for (const [what, path] of [
      ['a page', () => page],
      ['an object', () => `/v2/products/${big}`],
    ] as const) {
      it(`${what}: each coding decodes to the identical JSON, with its own ETag, Content-Length and Vary`, async () => {
        const identity = await raw(server, 'GET', path());
        assert.equal(identity.status, 200);
        assert.equal(identity.headers['content-encoding'], undefined);
        assert.equal(identity.headers.vary, 'Accept-Encoding');
        assert.ok(identity.bytes.length > 1024, `${identity.bytes.length} bytes: above the threshold`);
        const json = identity.bytes.toString('utf8');
        JSON.parse(json);
        const etag = identity.headers.etag!;
        for (const [accept, coding, suffix] of [
          ['gzip', 'gzip', '+gz'],
          ['br', 'br', '+br'],
          ['gzip, deflate, br', 'br', '+br'],
          ['br;q=0.5, gzip', 'gzip', '+gz'],
          ['x-gzip', 'gzip', '+gz'],
          ['*', 'br', '+br'],
          ['GZIP;q=0.8, identity;q=0.1', 'gzip', '+gz'],
        ] as const) {
          const r = await raw(server, 'GET', path(), { 'accept-encoding': accept });
          assert.equal(r.status, 200, accept);
          assert.equal(r.headers['content-encoding'], coding, accept);
          assert.equal(r.headers.vary, 'Accept-Encoding', accept);
          assert.equal(r.headers.etag, coded(etag, suffix), accept);
          assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
          assert.equal(Number(r.headers['content-length']), r.bytes.length, accept);
          assert.ok(r.bytes.length < identity.bytes.length / 2, `${accept}: ${r.bytes.length} of ${identity.bytes.length} bytes`);
          assert.equal(decoded(r), json, accept);
        }
      });

      it(`${what}: identity when the request names no coding Canon has, or refuses them`, async () => {
        const identity = await raw(server, 'GET', path());
        for (const accept of ['', 'identity', 'gzip;q=0', 'br;q=0, gzip;q=0', 'zstd', 'deflate', 'gzip;q=abc', ';;,,', '*;q=0', 'identity;q=0']) {
          const r = await raw(server, 'GET', path(), { 'accept-encoding': accept });
          assert.equal(r.status, 200, accept);
          assert.equal(r.headers['content-encoding'], undefined, accept);
          assert.equal(r.headers.etag, identity.headers.etag, accept);
          assert.deepEqual(r.bytes, identity.bytes, accept);
        }
      });

      it(`${what}: If-None-Match matches the ETag of the coding that would be sent, and the 304 carries it and Vary`, async () => {
        const etag = (await raw(server, 'GET', path())).headers.etag!;
        const hit = await raw(server, 'GET', path(), { 'accept-encoding': 'gzip', 'if-none-match': coded(etag, '+gz') });
        assert.equal(hit.status, 304);
        assert.equal(hit.headers.etag, coded(etag, '+gz'));
        assert.equal(hit.headers.vary, 'Accept-Encoding');
        assert.equal(hit.headers['content-encoding'], undefined);
        assert.equal(hit.bytes.length, 0);
        const brHit = await raw(server, 'GET', path(), { 'accept-encoding': 'br', 'if-none-match': `"other", ${coded(etag, '+br')}` });
        assert.equal(brHit.status, 304);
        assert.equal(brHit.headers.etag, coded(etag, '+br'));
        // The gzip tag does not validate the Brotli representation, nor the identity tag a coded one.
        const miss = await raw(server, 'GET', path(), { 'accept-encoding': 'br', 'if-none-match': coded(etag, '+gz') });
        assert.equal(miss.status, 200);
        assert.equal(miss.headers['content-encoding'], 'br');
        const identityTag = await raw(server, 'GET', path(), { 'accept-encoding': 'gzip', 'if-none-match': etag });
        assert.equal(identityTag.status, 200);
        assert.equal(identityTag.headers['content-encoding'], 'gzip');
        const plain = await raw(server, 'GET', path(), { 'if-none-match': etag });
        assert.equal(plain.status, 304);
        assert.equal(plain.headers.etag, etag);
        assert.equal(plain.headers.vary, 'Accept-Encoding');
      });

      it(`${what}: HEAD has the headers of the GET it stands for, and no body`, async () => {
        for (const accept of ['gzip', 'br', undefined]) {
          const headers: Record<string, string> = accept === undefined ? {} : { 'accept-encoding': accept };
          const get = await raw(server, 'GET', path(), headers);
          const head = await raw(server, 'HEAD', path(), headers);
          assert.equal(head.status, 200);
          assert.equal(head.bytes.length, 0);
          for (const name of ['etag', 'content-encoding', 'content-length', 'vary', 'content-type']) assert.equal(head.headers[name], get.headers[name], `${accept} ${name}`);
        }
      });
    }

    it('a body below the threshold is sent as it is, with Vary, unless the request refuses identity', async () => {
      const path = `/v2/products/${small}`;
      const identity = await raw(server, 'GET', path);
      assert.ok(identity.bytes.length < 1024);
      const r = await raw(server, 'GET', path, { 'accept-encoding': 'gzip, br' });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], undefined);
      assert.equal(r.headers.vary, 'Accept-Encoding');
      assert.equal(r.headers.etag, identity.headers.etag);
      assert.deepEqual(r.bytes, identity.bytes);
      const refused = await raw(server, 'GET', path, { 'accept-encoding': 'identity;q=0, gzip' });
      assert.equal(refused.headers['content-encoding'], 'gzip');
      assert.equal(refused.headers.etag, coded(identity.headers.etag!, '+gz'));
      assert.equal(decoded(refused), identity.bytes.toString('utf8'));
    });

    it('If-Match on a write takes the identity ETag and the coded ETag a client got, and still refuses a stale one', async () => {
      const path = `/v2/products/${big}`;
      const got = await raw(server, 'GET', path, { 'accept-encoding': 'gzip' });
      const gz = got.headers.etag!;
      assert.match(gz, /\+gz"$/);
      const byGz = await raw(server, 'PATCH', path, { 'if-match': gz }, { name: 'Big, renamed' });
      assert.equal(byGz.status, 200, byGz.bytes.toString());
      // The answer is coded as the request asks (none here): its ETag is the identity one, and it is current.
      const identityTag = byGz.headers.etag!;
      assert.doesNotMatch(identityTag, /\+(gz|br)"$/);
      const byIdentity = await raw(server, 'PATCH', path, { 'if-match': identityTag, 'accept-encoding': 'br' }, { name: 'Big, renamed again' });
      assert.equal(byIdentity.status, 200);
      assert.equal(byIdentity.headers['content-encoding'], 'br');
      const br = byIdentity.headers.etag!;
      assert.match(br, /\+br"$/);
      assert.equal(JSON.parse(decoded(byIdentity)).name, 'Big, renamed again');
      // Stale tags, in any coding, and a weak one (If-Match compares strongly, RFC 9110 §13.1.1), are refused.
      for (const stale of [gz, identityTag, `W/${br}`]) {
        const r = await raw(server, 'PATCH', path, { 'if-match': stale }, { name: 'never' });
        assert.equal(r.status, 412, stale);
      }
      const byBr = await raw(server, 'PATCH', path, { 'if-match': br }, { name: 'Big' });
      assert.equal(byBr.status, 200);
    });

    it('a create answers in the coding asked for, with its coding ETag; 204 and errors are never coded', async () => {
      const created = await raw(server, 'POST', '/v2/products', { 'accept-encoding': 'gzip' }, { name: 'Created', description: LONG, price: { amount: 1, currency: 'EUR' } });
      assert.equal(created.status, 201);
      assert.equal(created.headers['content-encoding'], 'gzip');
      assert.match(created.headers.etag!, /\+gz"$/);
      const body = JSON.parse(decoded(created));
      assert.equal(body.description, LONG);
      const gone = await raw(server, 'DELETE', `/v2/products/${body.id}`, { 'accept-encoding': 'gzip', 'if-match': created.headers.etag! });
      assert.equal(gone.status, 204);
      assert.equal(gone.headers['content-encoding'], undefined);
      const missing = await raw(server, 'GET', `/v2/products/${body.id}`, { 'accept-encoding': 'gzip' });
      assert.equal(missing.status, 404);
      assert.equal(missing.headers['content-encoding'], undefined);
      assert.equal(JSON.parse(missing.bytes.toString()).error.code, 'NOT_FOUND');
    });

    it('the /docs page and its assets are coded, with a 304 per coding', async () => {
      const page = await raw(server, 'GET', '/docs', { 'accept-encoding': 'br' });
      if (page.status === 503) return; // a build without the renderer: /docs answers 503 (docs-page.test.ts)
      assert.equal(page.status, 200);
      assert.equal(page.headers['content-encoding'], 'br');
      assert.match(page.headers.etag!, /\+br"$/);
      assert.match(decoded(page), /<html/i);
      const again = await raw(server, 'GET', '/docs', { 'accept-encoding': 'br', 'if-none-match': page.headers.etag! });
      assert.equal(again.status, 304);
      assert.equal(again.headers.vary, 'Accept-Encoding');
    });

    if (mode.startsWith('listen')) {
      it('fetch decodes every coding to the JSON inject sends, the lean read path included', async () => {
        const expected = (await raw(server, 'GET', `/v2/products/${big}`)).bytes.toString('utf8');
        for (const accept of ['gzip', 'br']) {
          const before = server.app.fastReads.served;
          const res = await fetch(`${server.baseUrl}/v2/products/${big}`, { headers: { 'x-api-key': ADMIN_KEY, 'accept-encoding': accept } });
          assert.equal(res.headers.get('content-encoding'), accept);
          assert.equal(await res.text(), expected);
          assert.equal(server.app.fastReads.served, before + 1, 'the lean path answered');
        }
      });

      it('the event stream is neither compressed nor buffered: its first lines arrive at once', async () => {
        const started = Date.now();
        const first = await new Promise<{ headers: http.IncomingHttpHeaders; chunk: string }>((resolve, reject) => {
          const req = http.get(`${server.baseUrl}/events`, { headers: { 'x-api-key': ADMIN_KEY, accept: 'text/event-stream', 'accept-encoding': 'gzip, br' } }, (res) => {
            res.once('data', (chunk: Buffer) => {
              resolve({ headers: res.headers, chunk: chunk.toString('utf8') });
              req.destroy();
            });
          });
          req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)));
          req.setTimeout(5_000, () => req.destroy(new Error('no event within 5 s')));
        });
        assert.ok(Date.now() - started < 5_000);
        assert.equal(first.headers['content-encoding'], undefined);
        assert.match(String(first.headers['content-type']), /^text\/event-stream/);
        assert.match(first.chunk, /^retry: \d+/);
      });
    }
  });
}

describe('CANON_COMPRESSION=off', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('inject', { compression: false });
    await createProduct(server, { description: LONG });
  });
  after(async () => server.close());

  it('sends every response as rendered, without Vary: Accept-Encoding', async () => {
    const plain = await raw(server, 'GET', '/v2/products?limit=20');
    const asked = await raw(server, 'GET', '/v2/products?limit=20', { 'accept-encoding': 'gzip, br' });
    assert.equal(asked.status, 200);
    assert.equal(asked.headers['content-encoding'], undefined);
    assert.equal(asked.headers.vary, undefined);
    assert.equal(asked.headers.etag, plain.headers.etag);
    assert.deepEqual(asked.bytes, plain.bytes);
  });
});

describe('CANON_COMPRESSION_THRESHOLD', () => {
  let server: TestServer;
  let id: string;
  before(async () => {
    server = await startServer('inject', { compressionThresholdBytes: 100 });
    id = (await createProduct(server, { description: 'short' })).id;
  });
  after(async () => server.close());

  it('codes bodies from that size on', async () => {
    const r = await raw(server, 'GET', `/v2/products/${id}`, { 'accept-encoding': 'gzip' });
    assert.ok(r.headers['content-encoding'] === 'gzip' && JSON.parse(decoded(r)).id === id);
  });
});
