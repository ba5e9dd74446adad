// The fan-out contract on memory and, with CANON_TEST_REDIS_URL, on Redis across two independent connections.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryFanOut } from '../../../src/fanout/memory-fanout.js';
import { RedisFanOut } from '../../../src/fanout/redis-fanout.js';
import type { FanOut } from '../../../src/fanout/types.js';
import { REDIS_SKIP, REDIS_URL, runPrefix } from '../../support/redis.js';

/** Collects messages until `count` arrived or `ms` passed (bounded). */
function collect(count: number, ms = 2000): { messages: string[]; handler: (m: string) => void; done: Promise<void> } {
  const messages: string[] = [];
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  const timer = setTimeout(resolve, ms);
  return {
    messages,
    handler: (m) => {
      messages.push(m);
      if (messages.length >= count) {
        clearTimeout(timer);
        resolve();
      }
    },
    done,
  };
}

/** `open` returns two handles: a publisher and a subscriber (the same object in memory, two processes' worth on Redis). */
function fanOutContract(name: string, open: () => Promise<[FanOut, FanOut]>): void {
  describe(`fan-out contract: ${name}`, () => {
    let pub: FanOut;
    let sub: FanOut;
    before(async () => {
      [pub, sub] = await open();
    });
    after(async () => {
      await pub.close();
      if (sub !== pub) await sub.close();
    });

    it('delivers every message, in order, to every subscriber', async () => {
      const a = collect(50);
      const b = collect(50);
      const offA = await sub.subscribe('orders', a.handler);
      const offB = await sub.subscribe('orders', b.handler);
      for (let i = 0; i < 50; i++) await pub.publish('orders', `m${i}`);
      await Promise.all([a.done, b.done]);
      const expected = Array.from({ length: 50 }, (_, i) => `m${i}`);
      assert.deepEqual(a.messages, expected);
      assert.deepEqual(b.messages, expected);
      await offA();
      await offB();
    });

    it('keeps channels apart and stops after unsubscribe', async () => {
      const c = collect(1, 300);
      const off = await sub.subscribe('one', c.handler);
      await pub.publish('two', 'not for you');
      await off();
      await pub.publish('one', 'too late');
      await c.done;
      assert.deepEqual(c.messages, []);
    });
  });
}

fanOutContract('memory', async () => {
  const f = new MemoryFanOut();
  return [f, f];
});
if (REDIS_SKIP) {
  describe('fan-out contract: redis', () => {
    it('needs Redis', { skip: REDIS_SKIP }, () => undefined);
  });
} else {
  fanOutContract('redis', async () => {
    const prefix = runPrefix();
    return [new RedisFanOut({ url: REDIS_URL!, prefix }), new RedisFanOut({ url: REDIS_URL!, prefix })];
  });
}
