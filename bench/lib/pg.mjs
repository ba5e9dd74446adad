// PostgreSQL and Redis for benchmarks: a scratch database dropped at the end, short-lived clients, and a Redis key prefix removed at the end.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { onCleanup } from './processes.mjs';

export const PG_BASE = new URL(process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432');
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function databaseUrl(name) {
  const url = new URL(PG_BASE.href);
  url.pathname = `/${name}`;
  return url.href;
}

/** Runs `fn(client)` on a short-lived connection, bounded in time. */
export async function withClient(name, fn) {
  const client = new pg.Client({ connectionString: databaseUrl(name), connectionTimeoutMillis: 10_000, statement_timeout: 120_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database canon_bench_<random>, dropped WITH (FORCE) at the end (also on errors and signals). With
 * `template` (a database of this run nobody is connected to), a copy of it: a seeded table for each server of a
 * write benchmark in a fraction of the seeding time.
 */
export async function createDatabase({ template } = {}) {
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(PG_BASE.hostname)) throw new Error(`BENCH_PG_URL must point at this machine (127.0.0.1), not ${PG_BASE.hostname}`);
  if (template !== undefined && !/^canon_bench_[0-9a-f]{12}$/.test(template)) throw new Error(`not a benchmark database: ${template}`);
  const name = `canon_bench_${randomBytes(6).toString('hex')}`;
  const version = await withClient('postgres', async (c) => {
    await c.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
    return (await c.query('SHOW server_version')).rows[0].server_version;
  });
  onCleanup(async () => {
    await withClient('postgres', (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    console.log(`bench: dropped database ${name}`);
  });
  console.log(`bench: created database ${name}${template ? ` from ${template}` : ''} (PostgreSQL ${version})`);
  return { name, url: databaseUrl(name), version };
}

/** A Redis key prefix of this run (CANON_REDIS_PREFIX); every key under it is deleted at the end. */
export async function redisPrefix() {
  const { Redis } = await import('ioredis');
  const prefix = `canon_bench_${randomBytes(6).toString('hex')}:`;
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000 });
  await probe.connect();
  await probe.ping();
  await probe.quit();
  onCleanup(async () => {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, connectTimeout: 5000 });
    try {
      let cursor = '0';
      let removed = 0;
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) removed += await redis.del(...keys);
      } while (cursor !== '0');
      console.log(`bench: removed ${removed} Redis keys under ${prefix}`);
    } finally {
      await redis.quit();
    }
  });
  return { url: REDIS_URL, prefix };
}

/** Drops a benchmark database now (its end-of-run clean-up then finds nothing to do). */
export async function dropDatabase(name) {
  if (!/^canon_bench_[0-9a-f]{12}$/.test(name)) throw new Error(`not a benchmark database: ${name}`);
  await withClient('postgres', (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}
