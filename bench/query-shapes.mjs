#!/usr/bin/env node
// Benchmark (issue 26.4): the memory a client can make Canon hold by varying the shape of its list queries.
//
//   npx tsc -p . && node bench/query-shapes.mjs
//   CANON_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/query-shapes.mjs   (PostgreSQL too)
//
// One Canon process per store (SQLite on a file; PostgreSQL when BENCH_PG_URL, CANON_TEST_DATABASE_URL or
// DATABASE_URL names a server on this machine, in a fresh database dropped at the end), rate limits raised so
// that nothing is refused. BENCH_SHAPE_PRODUCTS products (default 200) are created, a warm-up runs (fixed pages
// and reads by id, then BENCH_SHAPE_WARMUP, default 10,000, GETs of one shape as large as the largest measured:
// a cold process's heap grows under any load, and that is not what is measured), and the server's resident memory (VmRSS in /proc/<pid>/status) is read once it has settled (the median of
// five readings a second apart, after BENCH_SHAPE_SETTLE seconds idle, default 5).
// Then one client sends BENCH_SHAPES (default 50,000) GETs of /v2/products, every one of another shape:
// `id[in]` lists of 1 to 100 ids and `price.amount[in]` lists of 1 to 100 amounts (their counts together
// give 10,000 combinations), crossed with sorts over name, price and creation date in either direction and
// with either filter first (all distinct), BENCH_SHAPE_CONCURRENCY (default 8) at a time over kept-alive connections on
// loopback. Every answer must be 200. Resident memory is sampled during the run (the peak) and read again
// once the server has settled; the growth from before to after is compared with the target (64 MiB).
// BENCH_SHAPE_STORES=sqlite or =postgres measures one store only. Results go to bench/results/query-shapes.json.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { createProducts, startCanon } from './lib/canon.mjs';
import { RESULTS_DIR, fmt, intFromEnv } from './lib/options.mjs';
import { freePort, makeTempDir, request, runMain, stopServer, waitUntilReady } from './lib/processes.mjs';
import { machine, sourceVersion, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'query-shapes.json');
const ADMIN_KEY = 'ck_bench_query_shapes_0123456789abcdef';
const HEADERS = { 'x-api-key': ADMIN_KEY };
const SHAPES = intFromEnv('BENCH_SHAPES', 50_000, 100, 390_000);
const PRODUCTS = intFromEnv('BENCH_SHAPE_PRODUCTS', 200, 100, 10_000);
const CONCURRENCY = intFromEnv('BENCH_SHAPE_CONCURRENCY', 8, 1, 64);
/** Requests of one fixed shape before the first reading (the warm-up). */
const WARMUP = intFromEnv('BENCH_SHAPE_WARMUP', 10_000, 0, 1_000_000);
/** Seconds the server is left idle before each reading of its memory. */
const SETTLE_SECONDS = intFromEnv('BENCH_SHAPE_SETTLE', 5, 0, 120);
const TARGET_MIB = 64;
/** BENCH_SHAPE_STORES: which stores to measure, comma-separated (default both; PostgreSQL only when a server is named). */
const STORES = (process.env.BENCH_SHAPE_STORES ?? 'sqlite,postgres').split(',').map((s) => s.trim());
const MIB = 1024 * 1024;

/** The sorts a client may combine: every order of up to three sortable fields, each either way. */
const SORTS = (() => {
  const fields = ['name', 'price.amount', 'created_at'];
  const out = [];
  const walk = (prefix, left) => {
    if (prefix.length > 0) out.push(prefix.join(','));
    if (prefix.length === 3) return;
    for (const f of left)
      for (const sign of ['', '-'])
        walk(
          [...prefix, `${sign}${f}`],
          left.filter((x) => x !== f),
        );
  };
  walk([], fields);
  return out;
})();

/** The PostgreSQL server to use, if one was named: only one on this machine. */
function pgBase() {
  const raw = process.env.BENCH_PG_URL ?? process.env.CANON_TEST_DATABASE_URL ?? (process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : undefined);
  return raw === undefined ? undefined : raw;
}

/** Resident memory once settled: the median of five readings a second apart, after SETTLE_SECONDS idle (one reading varies with the collector's timing). */
async function settledRss(pid) {
  await sleep(SETTLE_SECONDS * 1000);
  const readings = [];
  for (let i = 0; i < 5; i++) {
    if (i > 0) await sleep(1000);
    readings.push(rssBytes(pid));
  }
  return { median: [...readings].sort((a, b) => a - b)[2], readings: readings.map((r) => Math.round((r / MIB) * 10) / 10) };
}

function rssBytes(pid) {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for process ${pid}`);
  return Number(m[1]) * 1024;
}

/**
 * The query string of shape `i`: the two IN lists' lengths follow from i mod 10,000 and the sort from i mod
 * the number of sorts, so shapes 0 … 389,999 are all distinct (10,000 and 78 have 390,000 as least common
 * multiple); which filter comes first alternates too.
 */
function shapeQuery(i, ids, amounts) {
  const idCount = 1 + (i % 100);
  const amountCount = 1 + (Math.floor(i / 100) % 100);
  const sort = SORTS[i % SORTS.length];
  const idsFirst = Math.floor(i / 7) % 2 === 0;
  const start = i % ids.length;
  const idList = Array.from({ length: idCount }, (_, k) => ids[(start + k) % ids.length]).join(',');
  const amountList = Array.from({ length: amountCount }, (_, k) => amounts[(start + k) % amounts.length]).join(',');
  const filters = idsFirst ? [`id[in]=${idList}`, `price.amount[in]=${amountList}`] : [`price.amount[in]=${amountList}`, `id[in]=${idList}`];
  return `${filters.join('&')}&sort=${encodeURIComponent(sort)}&limit=20`;
}

/** The warm-up's one shape (`id[in]` of 100 ids, `price.amount[in]` of 100 amounts, sorted by name), its values starting at `k`. */
function oneShape(k, ids, amounts) {
  const idList = Array.from({ length: 100 }, (_, j) => ids[(k + j) % ids.length]).join(',');
  const amountList = Array.from({ length: 100 }, (_, j) => amounts[(k + j) % amounts.length]).join(',');
  return `id[in]=${idList}&price.amount[in]=${amountList}&sort=name&limit=20`;
}

/** Sends `count` GETs of `/v2/products?<queryOf(i)>`, CONCURRENCY at a time over kept-alive connections; every answer must be 200. */
async function sendQueries(base, count, queryOf, onProgress) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const res = await request('GET', `${base}/v2/products?${queryOf(i)}`, { headers: HEADERS, timeoutMs: 30_000, agent });
      if (res.status !== 200) throw new Error(`query ${i} answered ${res.status}: ${res.body.slice(0, 300)}`);
      done++;
      if (done % 5_000 === 0) onProgress?.(done);
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  } finally {
    agent.destroy();
  }
}

async function runStore(label, databaseUrl) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = startCanon(port, { databaseUrl, adminKey: ADMIN_KEY, pinned: false, name: `Canon (${label})`, env: { CANON_WORKER: 'off' } });
  try {
    await waitUntilReady(server, base);
    const pid = server.child.pid;
    const ids = await createProducts(base, HEADERS, PRODUCTS, { label: 'shapes' });
    const amounts = Array.from({ length: PRODUCTS }, (_, i) => 100 + i);
    // Warm-up: a server that has served traffic, so that what follows measures shapes, not the heap a cold
    // process grows to under any load: fixed pages and reads by id, then WARMUP requests of ONE shape as large
    // as the largest measured, sent as the measured ones are.
    for (let i = 0; i < 500; i++) {
      const res = await request('GET', `${base}/v2/products?limit=20&sort=${i % 2 ? '-' : ''}created_at`, { headers: HEADERS, timeoutMs: 10_000 });
      if (res.status !== 200) throw new Error(`warm-up answered ${res.status}`);
      await request('GET', `${base}/v2/products/${ids[i % ids.length]}`, { headers: HEADERS, timeoutMs: 10_000 });
    }
    // One shape: both lists of 100 values, one sort, one order; the values move so that pages are read, not cached.
    await sendQueries(base, WARMUP, (k) => oneShape(k, ids, amounts));
    const settledBefore = await settledRss(pid);
    const before = settledBefore.median;
    let peak = before;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, rssBytes(pid));
      } catch {
        // the process is gone: the run fails on its own
      }
    }, 250);
    const started = process.hrtime.bigint();
    try {
      await sendQueries(
        base,
        SHAPES,
        (i) => shapeQuery(i, ids, amounts),
        (n) => console.log(`  ${label}: ${fmt(n)} shapes, RSS ${fmt(rssBytes(pid) / MIB, 1)} MiB`),
      );
    } finally {
      clearInterval(sampler);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const right = rssBytes(pid);
    const settledAfter = await settledRss(pid);
    const after = settledAfter.median;
    peak = Math.max(peak, right, after);
    const growthMiB = (after - before) / MIB;
    const result = {
      store: label,
      shapes: SHAPES,
      seconds: Math.round(seconds * 10) / 10,
      requestsPerSecond: Math.round(SHAPES / seconds),
      rssBeforeMiB: Math.round((before / MIB) * 10) / 10,
      rssRightAfterMiB: Math.round((right / MIB) * 10) / 10,
      rssAfterMiB: Math.round((after / MIB) * 10) / 10,
      rssPeakMiB: Math.round((peak / MIB) * 10) / 10,
      readingsBeforeMiB: settledBefore.readings,
      readingsAfterMiB: settledAfter.readings,
      growthMiB: Math.round(growthMiB * 10) / 10,
      targetMiB: TARGET_MIB,
      pass: growthMiB <= TARGET_MIB,
    };
    console.log(
      `${label}: ${fmt(SHAPES)} shapes in ${fmt(seconds, 1)} s (${fmt(result.requestsPerSecond)}/s); RSS ${fmt(result.rssBeforeMiB, 1)} → ${fmt(result.rssAfterMiB, 1)} MiB ` +
        `(peak ${fmt(result.rssPeakMiB, 1)}), growth ${fmt(growthMiB, 1)} MiB: ${result.pass ? 'PASS' : 'FAIL'} (target ≤ ${TARGET_MIB} MiB)`,
    );
    console.log(`  settled readings (MiB): before ${result.readingsBeforeMiB.join(' ')}; after ${result.readingsAfterMiB.join(' ')}`);
    return result;
  } finally {
    await stopServer(server);
  }
}

async function main() {
  console.log(`bench: ${fmt(SHAPES)} distinct list shapes per store, ${CONCURRENCY} at a time (10,000 IN-list length pairs × ${SORTS.length} sorts, either filter first)`);
  const results = [];
  const dir = makeTempDir('canon-bench-shapes-');
  if (STORES.includes('sqlite')) results.push(await runStore('sqlite', `sqlite:${path.join(dir, 'shapes.db')}`));
  const pgUrl = pgBase();
  if (!STORES.includes('postgres')) {
    // not asked for
  } else if (pgUrl !== undefined) {
    // bench/lib/pg.mjs reads BENCH_PG_URL when it is first imported.
    process.env.BENCH_PG_URL ??= new URL('/', pgUrl).href.replace(/\/$/, '');
    const { createDatabase } = await import('./lib/pg.mjs');
    const db = await createDatabase();
    results.push(await runStore('postgres', db.url));
  } else {
    console.log('bench: PostgreSQL skipped (no BENCH_PG_URL, CANON_TEST_DATABASE_URL or DATABASE_URL)');
  }
  writeResults(RESULTS_FILE, {
    benchmark: 'query-shapes',
    date: new Date().toISOString(),
    machine: machine(),
    source: sourceVersion(),
    method: { shapes: SHAPES, warmup: WARMUP, concurrency: CONCURRENCY, products: PRODUCTS, settleSeconds: SETTLE_SECONDS, sorts: SORTS.length },
    results,
  });
  if (results.some((r) => !r.pass)) process.exitCode = 1;
}

runMain(main);
