// The counters contract suite: memory and Redis adapters must pass exactly these tests.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Counters } from '../../../src/counters/types.js';

const key = (): string => `k-${randomBytes(6).toString('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function countersContract(name: string, open: () => Promise<Counters>): void {
  describe(`counters contract: ${name}`, () => {
    let c: Counters;
    before(async () => {
      c = await open();
    });
    after(async () => c.close());

    it('answers ping', async () => assert.equal(await c.ping(), true));

    it('token bucket: grants the capacity, counts down, then refuses with the time to the next token', async () => {
      const k = key();
      const bucket = { capacity: 5, periodSeconds: 50 };
      const start = Math.floor(Date.now() / 1000);
      for (let i = 4; i >= 0; i--) {
        const r = await c.tokenBucket(k, bucket);
        assert.equal(r.allowed, true);
        assert.equal(r.limit, 5);
        assert.equal(r.remaining, i);
        assert.equal(r.retryAfter, 0);
      }
      const refused = await c.tokenBucket(k, bucket);
      assert.equal(refused.allowed, false);
      assert.equal(refused.remaining, 0);
      // One token every 10 s.
      assert.ok(refused.retryAfter >= 9 && refused.retryAfter <= 10, `retryAfter ${refused.retryAfter}`);
      assert.ok(refused.resetAt >= start + 49 && refused.resetAt <= start + 52, `resetAt ${refused.resetAt - start}`);
    });

    it('token bucket: refills continuously', async () => {
      const k = key();
      const bucket = { capacity: 4, periodSeconds: 1 };
      for (let i = 0; i < 4; i++) assert.equal((await c.tokenBucket(k, bucket)).allowed, true);
      assert.equal((await c.tokenBucket(k, bucket)).allowed, false);
      await sleep(600);
      assert.equal((await c.tokenBucket(k, bucket)).allowed, true, 'about 2.4 tokens came back in 600 ms');
    });

    it('token bucket: a cost takes several tokens at once, or none', async () => {
      const k = key();
      const bucket = { capacity: 10, periodSeconds: 100 };
      assert.equal((await c.tokenBucket(k, bucket, 7)).remaining, 3);
      const r = await c.tokenBucket(k, bucket, 4);
      assert.equal(r.allowed, false);
      assert.equal(r.remaining, 3);
      assert.equal((await c.tokenBucket(k, bucket, 3)).remaining, 0);
    });

    it('sliding window: at most the limit in the window, then the time until the oldest leaves', async () => {
      const k = key();
      const window = { limit: 3, windowSeconds: 30 };
      for (let i = 2; i >= 0; i--) {
        const r = await c.slidingWindow(k, window);
        assert.equal(r.allowed, true);
        assert.equal(r.remaining, i);
      }
      const refused = await c.slidingWindow(k, window);
      assert.equal(refused.allowed, false);
      assert.ok(refused.retryAfter >= 29 && refused.retryAfter <= 30, `retryAfter ${refused.retryAfter}`);
      assert.ok(refused.resetAt >= Math.floor(Date.now() / 1000) + 29);
    });

    it('sliding window: entries leave the window', async () => {
      const k = key();
      const window = { limit: 2, windowSeconds: 1 };
      assert.equal((await c.slidingWindow(k, window)).allowed, true);
      assert.equal((await c.slidingWindow(k, window)).allowed, true);
      assert.equal((await c.slidingWindow(k, window)).allowed, false);
      await sleep(1100);
      assert.equal((await c.slidingWindow(k, window)).allowed, true);
    });

    it('keeps keys apart', async () => {
      const a = key();
      const b = key();
      const bucket = { capacity: 1, periodSeconds: 100 };
      assert.equal((await c.tokenBucket(a, bucket)).allowed, true);
      assert.equal((await c.tokenBucket(a, bucket)).allowed, false);
      assert.equal((await c.tokenBucket(b, bucket)).allowed, true);
    });

    it('is exact under concurrency: 200 at once against a limit of 50', async () => {
      const tb = key();
      const sw = key();
      const granted = async (fn: () => Promise<{ allowed: boolean }>) => (await Promise.all(Array.from({ length: 200 }, fn))).filter((r) => r.allowed).length;
      assert.equal(await granted(() => c.tokenBucket(tb, { capacity: 50, periodSeconds: 3600 })), 50);
      assert.equal(await granted(() => c.slidingWindow(sw, { limit: 50, windowSeconds: 3600 })), 50);
    });
  });
}
