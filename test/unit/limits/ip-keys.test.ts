// The rate limiter's remembered client-address keys: one budget per address however it is spelled, and a bounded memory that forgets nothing it counts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryCounters } from '../../../src/counters/memory-counters.js';
import { RateLimiter, type Verdict } from '../../../src/limits/rate-limiter.js';
import { GENEROUS_LIMITS } from '../../support/harness.js';

const limiter = (): RateLimiter => new RateLimiter(new MemoryCounters(() => 1_000_000), { ...GENEROUS_LIMITS, perIp: { limit: 3, periodSeconds: 60 } });

function refused(v: Verdict | Promise<Verdict>): boolean {
  assert.ok(!(v instanceof Promise), 'in-process counters answer at once');
  return v.refused !== undefined;
}

test('the spellings of one address share one budget, also once their keys are remembered', () => {
  const l = limiter();
  const spellings = ['198.51.100.7', '::ffff:198.51.100.7', '198.51.100.7'];
  assert.deepEqual(
    spellings.map((s) => refused(l.forIp(s))),
    [false, false, false],
  );
  assert.equal(refused(l.forIp('::ffff:198.51.100.7')), true);
  assert.equal(refused(l.forIp('198.51.100.7')), true);
  // IPv6 clients by their /64: another address of the network is the same client.
  const v6 = ['2001:db8::1', '2001:0db8:0:0:0:0:0:1', '2001:db8::ffff'].map((s) => refused(l.forIp(s)));
  assert.deepEqual(v6, [false, false, false]);
  assert.equal(refused(l.forIp('2001:db8:0:0:1234::9')), true);
  assert.equal(refused(l.forIp('2001:db8:0:1::1')), false, 'another /64 is another client');
});

test('more distinct addresses than the limiter remembers: each still counted, and counts survive the forgetting', () => {
  const l = limiter();
  for (let i = 0; i < 3; i++) assert.equal(refused(l.forIp('203.0.113.9')), false);
  // 10,000 distinct addresses (more than the 4,096 keys kept): every one is a new client with its own budget.
  for (let i = 0; i < 10_000; i++) assert.equal(refused(l.forIp(`10.${(i >> 8) & 255}.${i & 255}.1`)), false);
  // The forgotten key is parsed again and meets the budget it had: still refused.
  assert.equal(refused(l.forIp('203.0.113.9')), true);
  assert.equal(refused(l.forIp('::ffff:203.0.113.9')), true);
});
