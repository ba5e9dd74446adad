// Runs the counters contract on the memory adapter and, with CANON_TEST_REDIS_URL, on Redis.
import { describe, it } from 'node:test';
import { MemoryCounters } from '../../../src/counters/memory-counters.js';
import { RedisCounters } from '../../../src/counters/redis-counters.js';
import { REDIS_SKIP, REDIS_URL, runPrefix } from '../../support/redis.js';
import { countersContract } from './contract.js';

countersContract('memory', async () => new MemoryCounters());
if (REDIS_SKIP) {
  describe('counters contract: redis', () => {
    it('needs Redis', { skip: REDIS_SKIP }, () => undefined);
  });
} else {
  countersContract('redis', async () => new RedisCounters({ url: REDIS_URL!, prefix: runPrefix() }));
}
