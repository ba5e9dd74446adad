// Chooses the counters and fan-out backends from REDIS_URL: Redis when set (shared by every process), memory otherwise.
import { MemoryCounters } from '../counters/memory-counters.js';
import type { Counters } from '../counters/types.js';
import { MemoryFanOut } from '../fanout/memory-fanout.js';
import type { FanOut } from '../fanout/types.js';

export interface Shared {
  counters: Counters;
  fanout: FanOut;
  backend: 'memory' | 'redis';
}

/** The Redis backends (and ioredis with them) are imported only when REDIS_URL names a Redis (docs/architecture.md, "What a process loads"). */
export async function openShared(redisUrl: string | undefined, prefix = 'canon:'): Promise<Shared> {
  if (!redisUrl) return { counters: new MemoryCounters(), fanout: new MemoryFanOut(), backend: 'memory' };
  if (!/^rediss?:\/\//.test(redisUrl)) throw new Error(`REDIS_URL "${redisUrl}" is not understood; use redis://host:port`);
  const [{ RedisCounters }, { RedisFanOut }] = await Promise.all([import('../counters/redis-counters.js'), import('../fanout/redis-fanout.js')]);
  return {
    counters: new RedisCounters({ url: redisUrl, prefix: `${prefix}rl:` }),
    fanout: new RedisFanOut({ url: redisUrl, prefix: `${prefix}events:` }),
    backend: 'redis',
  };
}
