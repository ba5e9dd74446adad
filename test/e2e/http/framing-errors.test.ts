// Issue 13.8: a request without Host and a bad Expect get the uniform error body with X-Request-Id, over a real socket (Node answers both itself otherwise, with no body).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../../support/harness.js';

/** Writes `raw` and reads until the server closes or 2 s pass. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function exchange(base: string, raw: string): Promise<{ status: number; headers: Record<string, string>; body: any; raw: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let data = '';
    const timer = setTimeout(() => socket.destroy(), 2000);
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      const [head = '', body = ''] = data.split('\r\n\r\n', 2);
      if (head.startsWith('HTTP/1.1 100')) return resolve({ status: 100, headers: {}, body: undefined, raw: data });
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine?.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined, raw: data });
    });
    socket.write(raw);
  });
}

describe('framing errors Node would answer without a body', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('listen');
  });
  after(async () => server?.close());

  const cases: Array<[string, string, number, string]> = [
    ['HTTP/1.1 without Host', 'GET /v2/products HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'BAD_REQUEST'],
    ['HTTP/1.1 without Host on the lean read path', 'GET /v2/products/0190f3f0-0000-7000-8000-000000000000 HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'BAD_REQUEST'],
    ['Expect: 200-ok', 'GET /healthz HTTP/1.1\r\nHost: canon.test\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n', 417, 'EXPECTATION_FAILED'],
  ];
  for (const [name, raw, status, code] of cases) {
    it(`${name}: ${status} ${code} with the uniform body`, async () => {
      const res = await exchange(server.baseUrl!, raw);
      assert.equal(res.status, status);
      assert.equal(res.body.error.code, code);
      assert.equal(res.body.error.request_id, res.headers['x-request-id']);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.headers['cache-control'], 'no-store');
    });
  }

  it('HTTP/1.0 without Host is still served, and Expect: 100-continue still continues', async () => {
    assert.equal((await exchange(server.baseUrl!, 'GET /healthz HTTP/1.0\r\n\r\n')).status, 200);
    const res = await exchange(server.baseUrl!, 'GET /healthz HTTP/1.1\r\nHost: canon.test\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n');
    assert.equal(res.status, 100);
    assert.match(res.raw, /\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
  });
});
