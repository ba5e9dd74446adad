// Chooses the counters and fan-out backends from REDIS_URL: Redis when set (shared by every process), memory otherwise.
import { MemoryCounters } from '../counters/memory-counters.js';
import { RedisCounters } from '../counters/redis-counters.js';
import type { Counters } from '../counters/types.js';
import { MemoryFanOut } from '../fanout/memory-fanout.js';
import { RedisFanOut } from '../fanout/redis-fanout.js';
import type { FanOut } from '../fanout/types.js';

export interface Shared {
  counters: Counters;
  fanout: FanOut;
  backend: 'memory' | 'redis';
}

export function openShared(redisUrl: string | undefined, prefix = 'canon:'): Shared {
  if (!redisUrl) return { counters: new MemoryCounters(), fanout: new MemoryFanOut(), backend: 'memory' };
  if (!/^rediss?:\/\//.test(redisUrl)) throw new Error(`REDIS_URL "${redisUrl}" is not understood; use redis://host:port`);
  return {
    counters: new RedisCounters({ url: redisUrl, prefix: `${prefix}rl:` }),
    fanout: new RedisFanOut({ url: redisUrl, prefix: `${prefix}events:` }),
    backend: 'redis',
  };
}
