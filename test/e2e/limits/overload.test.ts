// Overload: a lagging event loop or an exhausted heap answers 503 SERVICE_UNAVAILABLE with Retry-After, not a time-out.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { errorShape, startServer, type TestServer } from '../../support/harness.js';

describe('overload protection', () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  it('answers 503 while the heap is over its limit, but liveness and readiness still answer', async () => {
    const server = await startServer('inject', { overload: { maxEventLoopDelayMs: 1000, maxHeapUsedBytes: 1, sampleIntervalMs: 10, retryAfterSeconds: 7 } });
    servers.push(server);
    await new Promise((r) => setTimeout(r, 50));
    const res = await server.request('GET', '/v2/products');
    assert.equal(res.status, 503);
    assert.equal(errorShape(res).code, 'SERVICE_UNAVAILABLE');
    assert.equal(res.headers['retry-after'], '7');
    assert.equal((await server.request('GET', '/healthz')).status, 200);
    assert.equal((await server.request('GET', '/readyz')).status, 200);
  });

  it('answers 503 after the event loop lagged, and recovers', async () => {
    const server = await startServer('listen', { overload: { maxEventLoopDelayMs: 100, maxHeapUsedBytes: undefined, sampleIntervalMs: 300, retryAfterSeconds: 3 } });
    servers.push(server);
    // Block the loop for 700 ms (this test shares the server's process), then let one sample see it.
    const until = Date.now() + 700;
    while (Date.now() < until) {
      // busy: a blocked event loop is what is being simulated
    }
    await new Promise((r) => setTimeout(r, 5));
    const res = await server.request('GET', '/v2/products');
    assert.equal(res.status, 503);
    assert.equal(res.headers['retry-after'], '3');
    let recovered = 0;
    for (let i = 0; i < 40 && recovered !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      recovered = (await server.request('GET', '/v2/products')).status;
    }
    assert.equal(recovered, 200);
  });
});
