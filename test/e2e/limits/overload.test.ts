// Overload: a lagging event loop or an exhausted heap answers 503 SERVICE_UNAVAILABLE with Retry-After, not a time-out; tests not about it run with the event-loop check off.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { errorShape, startServer, TEST_OVERLOAD, type TestServer } from '../../support/harness.js';

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

  /**
   * Issue 26.14: a loaded machine turned a test's requests into 503s although the harness's threshold was 30 s. A
   * sample in which the loop never ticked (a stall starting just after one sample and lasting past the next; the
   * first tick after a reset only primes the histogram) has no mean, and @fastify/under-pressure reads that as an
   * infinite delay, over any threshold. So the tests' setting turns the event-loop check off instead (TEST_OVERLOAD).
   */
  it('the tests’ setting (TEST_OVERLOAD) answers through a stall that spans a whole sample', async () => {
    const server = await startServer('inject', { overload: TEST_OVERLOAD });
    servers.push(server);
    const sampled = (): number => (server.app as unknown as { memoryUsage(): { eventLoopDelay: number } }).memoryUsage().eventLoopDelay;
    // Wait for a sample to be taken (its value moves), then stall at once, longer than the sample interval.
    const before = sampled();
    const deadline = Date.now() + 5000;
    while (sampled() === before && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    const until = Date.now() + TEST_OVERLOAD.sampleIntervalMs + 300;
    while (Date.now() < until) {
      // busy: a starved or stalled process is what is being simulated
    }
    await new Promise((r) => setTimeout(r, 20));
    const res = await server.request('GET', '/v2/products?limit=1');
    assert.equal(res.status, 200, res.text);
  });
});
