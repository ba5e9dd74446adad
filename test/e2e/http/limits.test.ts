// Socket-level limits on a real listening server: slow clients cut off, oversized heads (431) and targets (414).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { errorShape, startServer, type TestServer } from '../../support/harness.js';

interface RawResult {
  text: string;
  closedAfterMs: number;
}

/** Sends `chunks` one per `intervalMs` (bounded), and resolves when the server closes the socket or `maxMs` passes. */
function rawExchange(url: string, chunks: string[], intervalMs: number, maxMs: number): Promise<RawResult> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(Number(port), hostname);
    let text = '';
    let i = 0;
    const timer = setInterval(() => {
      if (i < chunks.length && !socket.destroyed) socket.write(chunks[i++]!);
    }, intervalMs);
    const done = (): void => {
      clearInterval(timer);
      clearTimeout(guard);
      socket.destroy();
      resolve({ text, closedAfterMs: Date.now() - started });
    };
    const guard = setTimeout(done, maxMs);
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', done);
    socket.on('error', done);
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function parseRaw(text: string): { status: number; headers: Record<string, string>; body: any } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined };
}

describe('socket limits (listening server)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('listen', { headersTimeoutMs: 1000, requestTimeoutMs: 2000 });
  });
  after(async () => server.close());

  it('cuts off a client sending its headers one byte per 100 ms within the headers timeout', async () => {
    const request = 'GET /v2/products HTTP/1.1\r\nHost: localhost\r\nX-Padding: ' + 'a'.repeat(200) + '\r\n\r\n';
    const result = await rawExchange(server.baseUrl!, [...request], 100, 6000);
    // 1 s timeout, checked every 250 ms: closed well before the 30 s the whole request would take.
    assert.ok(result.closedAfterMs < 2500, `closed after ${result.closedAfterMs} ms`);
    const res = parseRaw(result.text);
    assert.equal(res.status, 408);
    assert.equal(res.body.error.code, 'REQUEST_TIMEOUT');
    assert.equal(res.body.error.request_id, res.headers['x-request-id']);
  });

  it('cuts off a client trickling its body within the request timeout', async () => {
    const head = 'POST /v2/products HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nX-API-Key: x\r\n\r\n';
    const result = await rawExchange(server.baseUrl!, [head, ...('{"name":"' + 'a'.repeat(100))], 100, 8000);
    assert.ok(result.closedAfterMs < 3500, `closed after ${result.closedAfterMs} ms`);
  });

  it('answers 431 in the error body for oversized headers', async () => {
    const res = await fetch(`${server.baseUrl}/v2/products`, { headers: { 'x-big': 'a'.repeat(40 * 1024) } });
    assert.equal(res.status, 431);
    const body = (await res.json()) as { error: { code: string; request_id: string } };
    assert.equal(body.error.code, 'HEADERS_TOO_LARGE');
    assert.equal(body.error.request_id, res.headers.get('x-request-id'));
  });

  it('answers 414 for an overlong request target', async () => {
    const res = await server.request('GET', `/v2/products?status=${'a'.repeat(10_000)}`);
    assert.equal(res.status, 414);
    assert.equal(errorShape(res).code, 'URI_TOO_LONG');
  });

  it('answers 400 in the error body for a request that is not HTTP', async () => {
    const result = await rawExchange(server.baseUrl!, ['NOT HTTP AT ALL\r\n\r\n'], 10, 3000);
    const res = parseRaw(result.text);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'BAD_REQUEST');
  });

  it('stays healthy afterwards', async () => {
    const res = await server.request('GET', '/healthz');
    assert.equal(res.status, 200);
  });
});
