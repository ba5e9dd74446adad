// Redis counters: each consumption is one atomic Lua script timed by the Redis clock, so every process agrees.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Consumption, Counters, SlidingWindow, TokenBucket } from './types.js';

/** Refill, then take `cost` tokens if there are enough. Floats travel as strings (Lua numbers are truncated on return). */
const TOKEN_BUCKET = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local capacity = tonumber(ARGV[1])
local rate = capacity / tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate)
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
local fullIn = math.ceil((capacity - tokens) / rate)
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.max(1, fullIn))
return {allowed, tostring(tokens), now, fullIn}
`;

/** A sliding log in a sorted set: drop what left the window, count, add `cost` entries if they fit. */
const SLIDING_WINDOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - windowMs)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count + cost <= limit then
  for i = 1, cost do redis.call('ZADD', KEYS[1], now, ARGV[4] .. ':' .. i) end
  count = count + cost
  allowed = 1
end
redis.call('PEXPIRE', KEYS[1], windowMs)
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local freeAt = now
if allowed == 0 then
  local idx = count + cost - limit - 1
  local e = redis.call('ZRANGE', KEYS[1], idx, idx, 'WITHSCORES')
  if e[2] then freeAt = tonumber(e[2]) end
end
return {allowed, count, now, oldest[2] or tostring(now), tostring(freeAt)}
`;

type Script = (key: string, ...args: Array<string | number>) => Promise<Array<string | number>>;

export interface RedisCountersOptions {
  url: string;
  /** Namespaces every key, so several deployments (or test runs) can share one Redis. */
  prefix?: string;
}

export class RedisCounters implements Counters {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(options: RedisCountersOptions) {
    this.prefix = options.prefix ?? 'canon:rl:';
    // Fail fast rather than queue: the rate limiter decides what to do when Redis is away.
    this.redis = new Redis(options.url, { maxRetriesPerRequest: 1, commandTimeout: 1000, enableOfflineQueue: true, lazyConnect: false });
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('canonTokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET });
    this.redis.defineCommand('canonSlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW });
  }

  private script(name: 'canonTokenBucket' | 'canonSlidingWindow'): Script {
    return (this.redis as unknown as Record<string, Script>)[name]!.bind(this.redis);
  }

  async tokenBucket(key: string, { capacity, periodSeconds }: TokenBucket, cost = 1): Promise<Consumption> {
    const [allowed, tokens, now, fullIn] = await this.script('canonTokenBucket')(`${this.prefix}tb:${key}`, capacity, periodSeconds * 1000, cost);
    const left = Number(tokens);
    const ratePerMs = capacity / (periodSeconds * 1000);
    return {
      allowed: Number(allowed) === 1,
      limit: capacity,
      remaining: Math.floor(left),
      resetAt: Math.ceil((Number(now) + Number(fullIn)) / 1000),
      retryAfter: Number(allowed) === 1 ? 0 : Math.ceil((cost - left) / ratePerMs / 1000),
    };
  }

  async slidingWindow(key: string, { limit, windowSeconds }: SlidingWindow, cost = 1): Promise<Consumption> {
    const windowMs = windowSeconds * 1000;
    const token = randomBytes(8).toString('base64url');
    const [allowed, count, now, oldest, freeAt] = await this.script('canonSlidingWindow')(`${this.prefix}sw:${key}`, limit, windowMs, cost, token);
    const ok = Number(allowed) === 1;
    return {
      allowed: ok,
      limit,
      remaining: Math.max(0, limit - Number(count)),
      resetAt: Math.ceil((Number(oldest) + windowMs) / 1000),
      retryAfter: ok ? 0 : Math.max(1, Math.ceil((Number(freeAt) + windowMs - Number(now)) / 1000)),
    };
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.redis.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.redis.status !== 'ready') this.redis.disconnect();
    else await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
