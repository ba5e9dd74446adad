#!/usr/bin/env node
// Benchmark (issue 4): Canon on PostgreSQL vs a minimal Fastify + pg server: GET by id and a filtered, sorted 20-item list.
//
//   npm run bench:postgres      (builds first)
//   node bench/postgres.mjs     (expects a fresh build in dist/)
//
// Needs PostgreSQL on 127.0.0.1 (BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432). Creates a fresh
// database canon_bench_<random>, migrates and seeds BENCH_PRODUCTS (default 10,000) products through Canon's own
// PgStore, runs VACUUM ANALYZE, then runs each server alone on core 0 (client on core 1): Canon by id, baseline
// by id, Canon list, baseline list. PostgreSQL is not pinned; its CPU share is read from /proc. The database is
// dropped WITH (FORCE) at the end, also on errors and signals. Results go to bench/results/postgres.json.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { openCanonStore, reportProfile, seedProducts, startCanon } from './lib/canon.mjs';
import { cpuSecondsBetween, cpuSecondsByName, setUpPinning } from './lib/cpu.mjs';
import { measure } from './lib/load.mjs';
import { RESULTS_DIR, ROOT, fmt, intFromEnv } from './lib/options.mjs';
import { childEnv, getJson, onCleanup, runMain, startServer, withServer } from './lib/processes.mjs';
import { headline, packageVersion, printTable, problemsOf, resultsHeader, sourceProblems, sourceVersion, verdict, verdictText, warnAboutCpu, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'postgres.json');
const FASTIFY_PG = path.join(ROOT, 'bench/baselines/fastify-pg.mjs');
const ADMIN_KEY = 'ck_bench_postgres_0123456789abcdef';
const HEADERS = { 'x-api-key': ADMIN_KEY };
const PRODUCTS = intFromEnv('BENCH_PRODUCTS', 10_000, 100, 1_000_000);
const TARGET = 0.7;
const PG_BASE = new URL(process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432');
const POSTGRES_CPU = { name: 'database', sample: () => cpuSecondsByName('postgres'), seconds: cpuSecondsBetween };

function databaseUrl(name) {
  const url = new URL(PG_BASE.href);
  url.pathname = `/${name}`;
  return url.href;
}

/** Runs `fn(client)` on a short-lived connection, bounded in time. */
async function withClient(name, fn) {
  const client = new pg.Client({ connectionString: databaseUrl(name), connectionTimeoutMillis: 10_000, statement_timeout: 120_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function createDatabase() {
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(PG_BASE.hostname)) throw new Error(`BENCH_PG_URL must point at this machine (127.0.0.1), not ${PG_BASE.hostname}`);
  const name = `canon_bench_${randomBytes(6).toString('hex')}`;
  const version = await withClient('postgres', async (c) => {
    await c.query(`CREATE DATABASE ${name}`);
    return (await c.query('SHOW server_version')).rows[0].server_version;
  });
  onCleanup(async () => {
    await withClient('postgres', (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    console.log(`bench: dropped database ${name}`);
  });
  console.log(`bench: created database ${name} (PostgreSQL ${version})`);
  return { name, url: databaseUrl(name), version };
}

/** One server process measuring one request; checks the answer first with `check(json)`. */
async function run(start, label, profileName, urlPath, headers, check) {
  const result = await withServer(start, async (server, base) => {
    const { json } = await getJson(`${base}${urlPath}`, headers);
    const checked = check(json);
    const r = await measure(server, { url: `${base}${urlPath}`, headers }, { label, name: profileName, extraCpu: POSTGRES_CPU });
    return { ...r, checked };
  });
  const profile = profileName.startsWith('canon') ? reportProfile(profileName) : undefined;
  return profile ? { ...result, profile } : result;
}

async function main() {
  const pinning = setUpPinning();
  headline(`PostgreSQL (${fmt(PRODUCTS)} products)`, pinning);
  const db = await createDatabase();

  const store = await openCanonStore(db.url);
  const seeding = await seedProducts(store, PRODUCTS, { batch: 10_000 });
  await store.close();
  await withClient(db.name, (c) => c.query('VACUUM ANALYZE'));
  console.log(`bench: seeded ${fmt(PRODUCTS)} products through PgStore in ${seeding.seconds.toFixed(2)} s, then VACUUM ANALYZE`);

  const id = seeding.ids[Math.floor(PRODUCTS / 2)];
  const canon = (profileName) => (port) => startCanon(port, { databaseUrl: db.url, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName });
  const baseline = (port) => startServer('fastify-pg', FASTIFY_PG, [], childEnv({ PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: db.url }), pinning.pinned);
  const sameId = (json) => {
    if (json.id !== id) throw new Error(`GET by id returned ${json.id}, expected ${id}`);
    return { id: json.id };
  };
  const twentyActive = (json) => {
    if (json.data?.length !== 20 || json.data.some((p) => p.status !== 'active'))
      throw new Error(`the list did not return 20 active products: ${JSON.stringify(json).slice(0, 300)}`);
    return { ids: json.data.map((p) => p.id) };
  };

  const canonById = await run(canon('canon-pg-by-id'), 'Canon GET /v2/products/{id}', 'canon-pg-by-id', `/v2/products/${id}`, HEADERS, sameId);
  const baseById = await run(baseline, 'Fastify + pg GET /products/{id}', 'fastify-pg-by-id', `/products/${id}`, {}, sameId);
  const canonList = await run(
    canon('canon-pg-list'),
    'Canon GET /v2/products?status=active&sort=-price.amount&limit=20',
    'canon-pg-list',
    '/v2/products?status=active&sort=-price.amount&limit=20',
    HEADERS,
    twentyActive,
  );
  const baseList = await run(baseline, 'Fastify + pg GET /products?status=active&limit=20', 'fastify-pg-list', '/products?status=active&limit=20', {}, twentyActive);

  const rows = [canonById, baseById, canonList, baseList];
  const source = sourceVersion();
  const problems = rows.flatMap((r) => problemsOf(r)).concat(sourceProblems(source));
  const sameList = canonList.checked.ids.join() === baseList.checked.ids.join();
  if (!sameList) problems.push('Canon and the baseline listed different products');
  const v = {
    byId: verdict(canonById.requestsPerSecond.average / baseById.requestsPerSecond.average, TARGET),
    list: verdict(canonList.requestsPerSecond.average / baseList.requestsPerSecond.average, TARGET),
  };

  console.log('');
  printTable(rows, { extraCpu: 'database' });
  console.log('');
  console.log(verdictText('GET by id, Canon / Fastify + pg req/s', v.byId));
  console.log(verdictText('20-item list, Canon / Fastify + pg req/s', v.list));
  console.log(`same 20 products listed by both: ${sameList}`);
  warnAboutCpu(rows);

  writeResults(RESULTS_FILE, {
    ...resultsHeader(
      'postgres',
      source,
      pinning,
      {
        products: PRODUCTS,
        seedSeconds: seeding.seconds,
        pg: `pg ${packageVersion('pg')}; baseline pool of 10, Canon CANON_DB_POOL_SIZE default (10)`,
        postgresCpu: 'summed over every process named postgres, from /proc/<pid>/stat; PostgreSQL is not pinned',
        order: 'Canon by id, baseline by id, Canon list, baseline list; each its own process, one at a time',
        canonRateLimit: 'on, limits 1000000000/1',
      },
      { postgres: db.version },
    ),
    results: { canonById, baselineById: baseById, canonList, baselineList: baseList },
    verdicts: v,
    sameList,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
