// Child process for the cross-process test: N concurrent consumptions of one Redis key; prints how many were granted.
import { RedisCounters } from '../../src/counters/redis-counters.js';

const [url, prefix, key, kind, limit, count] = process.argv.slice(2) as [string, string, string, string, string, string];
const counters = new RedisCounters({ url, prefix });
const run = (): Promise<{ allowed: boolean }> =>
  kind === 'bucket' ? counters.tokenBucket(key, { capacity: Number(limit), periodSeconds: 86_400 }) : counters.slidingWindow(key, { limit: Number(limit), windowSeconds: 86_400 });
const results = await Promise.all(Array.from({ length: Number(count) }, run));
process.stdout.write(String(results.filter((r) => r.allowed).length));
await counters.close();
