#!/usr/bin/env node
// Benchmark (issue 3): Canon's filtered, sorted 20-item list on 100,000 SQLite products vs Fastify+SQLite and json-server, and cursor depth.
//
//   npm run bench:collections      (builds first)
//   node bench/collections.mjs     (expects a fresh build in dist/)
//
// Seeds 100,000 products once into a fresh SQLite file through Canon's own store (and the same products into
// a db.json for json-server), then runs each server alone on core 0 (client on core 1), one after another:
// Canon's first page, Canon's first page and a page 80,000 rows deep on the same unfiltered sort, Baseline A
// (bench/baselines/fastify-sqlite.mjs, offset page with total) and json-server 0.17. Results go to
// bench/results/collections.json. Environment: as bench/get-by-id.mjs, plus BENCH_PRODUCTS (default 100000),
// BENCH_JSON_SERVER_DURATION (measured seconds for json-server, default BENCH_DURATION) and BENCH_CPU_PROF
// (a directory: profile Canon with node --cpu-prof).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { openCanonStore, reportProfile, seedProducts, startCanon } from './lib/canon.mjs';
import { setUpPinning } from './lib/cpu.mjs';
import { measure } from './lib/load.mjs';
import { RESULTS_DIR, ROOT, fmt, intFromEnv, settings } from './lib/options.mjs';
import { childEnv, getJson, makeTempDir, runMain, startServer, withServer } from './lib/processes.mjs';
import { headline, packageVersion, printTable, problemsOf, resultsHeader, sourceProblems, sourceVersion, verdict, verdictText, warnAboutCpu, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'collections.json');
const FASTIFY_SQLITE = path.join(ROOT, 'bench/baselines/fastify-sqlite.mjs');
const JSON_SERVER = path.join(ROOT, 'node_modules/.bin/json-server');
const ADMIN_KEY = 'ck_bench_collections_0123456789abcdef';
const HEADERS = { 'x-api-key': ADMIN_KEY };
const PRODUCTS = intFromEnv('BENCH_PRODUCTS', 100_000, 1_000, 1_000_000);
const JSON_SERVER_DURATION = intFromEnv('BENCH_JSON_SERVER_DURATION', settings.duration, 1, 600);
const DEPTH = Math.min(80_000, PRODUCTS - 20);
const WALK_LIMIT = 100;
const WALK_MAX_REQUESTS = 1_000;
const WALK_MAX_MS = 300_000;
const TARGETS = { vsBaselineA: 0.8, vsJsonServer: 10, deepOverFirstLatency: 1.3 };

const FILTERED = '/v2/products?status=active&sort=-price.amount&limit=20';
const UNFILTERED = '/v2/products?sort=-price.amount&limit=20';

/** Follows next_cursor on the unfiltered sort, WALK_LIMIT rows a page, until DEPTH rows lie behind; bounded. */
async function walkToDepth(base) {
  const started = Date.now();
  let cursor = null;
  let depth = 0;
  let requests = 0;
  while (depth < DEPTH) {
    if (requests >= WALK_MAX_REQUESTS || Date.now() - started > WALK_MAX_MS)
      throw new Error(`cursor walk stopped at depth ${depth} after ${requests} requests (bounds: ${WALK_MAX_REQUESTS} requests, ${WALK_MAX_MS / 1000} s)`);
    const limit = Math.min(WALK_LIMIT, DEPTH - depth);
    const url = `${base}/v2/products?sort=-price.amount&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const { json } = await getJson(url, HEADERS, { timeoutMs: 10_000 });
    requests++;
    depth += json.data.length;
    cursor = json.pagination?.next_cursor;
    if (!cursor) throw new Error(`the list ended at depth ${depth} (expected at least ${DEPTH + 20} products)`);
  }
  return { cursor, depth, requests, seconds: (Date.now() - started) / 1000 };
}

/** One Canon process: start, check the page, optionally walk first, measure, stop; profile when asked. */
async function canonRun(db, pinned, label, profileName, pathFor) {
  const result = await withServer(
    (port) => startCanon(port, { databaseUrl: `sqlite:${db}`, adminKey: ADMIN_KEY, pinned, profileName }),
    async (server, base) => {
      const { path: urlPath, walk } = await pathFor(base);
      const { json } = await getJson(`${base}${urlPath}`, HEADERS);
      if (json.data?.length !== 20) throw new Error(`${label}: expected 20 items, got ${json.data?.length}`);
      const r = await measure(server, { url: `${base}${urlPath}`, headers: HEADERS }, { label, name: profileName });
      return { ...r, ...(walk ? { walk } : {}), firstIds: json.data.map((p) => p.id) };
    },
    { readyTimeoutMs: 60_000 },
  );
  const profile = reportProfile(profileName);
  return profile ? { ...result, profile } : result;
}

async function main() {
  const pinning = setUpPinning();
  headline(`collections (${fmt(PRODUCTS)} products)`, pinning);
  const dir = makeTempDir('canon-bench-collections-');
  const db = path.join(dir, 'canon.db');

  // Seed once: Canon's store in large transactions; the same records for json-server, which sorts on the
  // nested price.amount (lodash orderBy paths); the extra top-level price_amount is not used by the query.
  const store = await openCanonStore(`sqlite:${db}`);
  const forJson = [];
  const seeding = await seedProducts(store, PRODUCTS, { batch: 10_000, onRecord: (r) => forJson.push({ ...r, price_amount: r.price.amount }) });
  await store.close();
  console.log(`bench: seeded ${fmt(PRODUCTS)} products into ${path.basename(db)} in ${seeding.seconds.toFixed(2)} s`);
  const dbJson = path.join(dir, 'db.json');
  writeFileSync(dbJson, JSON.stringify({ products: forJson }));
  forJson.length = 0;

  const first = await canonRun(db, pinning.pinned, 'Canon filtered first page (cursor)', 'canon-filtered', async () => ({ path: FILTERED }));
  const unfilteredFirst = await canonRun(db, pinning.pinned, 'Canon unfiltered first page', 'canon-unfiltered-first', async () => ({ path: UNFILTERED }));
  const deep = await canonRun(db, pinning.pinned, `Canon unfiltered page at depth ${fmt(DEPTH)}`, 'canon-unfiltered-deep', async (base) => {
    const walk = await walkToDepth(base);
    console.log(`bench: walked to depth ${fmt(walk.depth)} in ${walk.requests} requests (${walk.seconds.toFixed(1)} s)`);
    return { path: `${UNFILTERED}&cursor=${encodeURIComponent(walk.cursor)}`, walk };
  });

  const baselineA = await withServer(
    (port) => startServer('fastify-sqlite', FASTIFY_SQLITE, [], childEnv({ PORT: String(port), HOST: '127.0.0.1', DB_FILE: db }), pinning.pinned),
    async (server, base) => {
      const url = `${base}/products?status=active&offset=0&limit=20`;
      const { json } = await getJson(url);
      const r = await measure(server, { url }, { label: 'Baseline A: Fastify + SQLite (offset, total)', name: 'fastify-sqlite' });
      return { ...r, total: json.total, firstIds: json.data.map((p) => p.id) };
    },
  );

  // json-server 0.17 sorts with lodash orderBy, which takes the nested path price.amount.
  const jsonServer = await withServer(
    (port) => startServer('json-server', JSON_SERVER, [dbJson, '--port', String(port), '--host', '127.0.0.1', '--quiet'], childEnv({}), pinning.pinned),
    async (server, base) => {
      const url = `${base}/products?status=active&_sort=price.amount&_order=desc&_limit=20`;
      const { json, res } = await getJson(url, {}, { timeoutMs: 30_000 });
      const r = await measure(server, { url, timeout: 60 }, { label: 'json-server 0.17', name: 'json-server', duration: JSON_SERVER_DURATION });
      return { ...r, total: Number(res.headers['x-total-count']), firstIds: json.map((p) => p.id) };
    },
    { readyPath: '/products?_limit=1', readyTimeoutMs: 120_000 },
  );

  const rows = [first, baselineA, jsonServer, unfilteredFirst, deep];
  const source = sourceVersion();
  const problems = rows.flatMap((r) => problemsOf(r)).concat(sourceProblems(source));
  const sameFirstPage = first.firstIds.join() === baselineA.firstIds.join() && first.firstIds.join() === jsonServer.firstIds.join();
  if (!sameFirstPage) problems.push('Canon, Baseline A and json-server returned different first pages');
  const v = {
    vsBaselineA: verdict(first.requestsPerSecond.average / baselineA.requestsPerSecond.average, TARGETS.vsBaselineA),
    vsJsonServer: verdict(first.requestsPerSecond.average / jsonServer.requestsPerSecond.average, TARGETS.vsJsonServer),
    deepOverFirstLatency: verdict(deep.latencyMs.mean / unfilteredFirst.latencyMs.mean, TARGETS.deepOverFirstLatency, true),
  };
  const firstOverDeepRps = unfilteredFirst.requestsPerSecond.average / deep.requestsPerSecond.average;

  console.log('');
  printTable(rows);
  console.log('');
  console.log(verdictText('Canon filtered first page / Baseline A req/s', v.vsBaselineA));
  console.log(verdictText('Canon filtered first page / json-server req/s', v.vsJsonServer));
  console.log(verdictText(`Canon mean latency, depth ${fmt(DEPTH)} / first page`, v.deepOverFirstLatency));
  console.log(`Canon req/s, first page / depth ${fmt(DEPTH)}: ${firstOverDeepRps.toFixed(2)}x`);
  console.log(`first pages identical on all three servers: ${sameFirstPage} (total active: Baseline A ${fmt(baselineA.total)}, json-server ${fmt(jsonServer.total)})`);
  warnAboutCpu(rows);
  for (const r of rows) delete r.firstIds;

  writeResults(RESULTS_FILE, {
    ...resultsHeader('collections', source, pinning, {
      products: PRODUCTS,
      seedSeconds: seeding.seconds,
      jsonServer: `json-server ${packageVersion('json-server')}, ${JSON_SERVER_DURATION} s measured, 60 s request timeout, nested sort _sort=price.amount`,
      order: 'Canon filtered, Canon unfiltered first page, Canon deep page (each its own process), Baseline A, json-server; one at a time',
      canonRateLimit: 'on, limits 1000000000/1',
    }),
    results: { canonFiltered: first, baselineA, jsonServer, canonUnfilteredFirst: unfilteredFirst, canonDeep: deep },
    verdicts: v,
    firstOverDeepRequestsPerSecond: firstOverDeepRps,
    sameFirstPage,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
