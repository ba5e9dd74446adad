#!/usr/bin/env node
// Benchmark: GET /v2/products/{id} on Canon against a bare node:http server (bench/baselines/bare-http.mjs).
//
//   npm run bench                 (builds first)
//   node bench/get-by-id.mjs      (expects a fresh build in dist/)
//
// Method (see docs/BENCHMARKS.md): each server runs as a child process pinned to core 0 (`taskset -c 0`);
// this process, which hosts the autocannon client, pins itself to core 1. The servers are loaded one
// after the other, never together: start, wait for /healthz, warm up, measure, stop. Everything talks
// to 127.0.0.1 only. Results are printed as a table and written to bench/results/get-by-id.json.
//
// Environment: BENCH_DURATION (measured seconds, default 10), BENCH_CONNECTIONS (default 50),
// BENCH_WARMUP (warm-up seconds, default 3), BENCH_PIPELINING (default 1), BENCH_QUIET_WAIT (at most this
// many seconds, default 30, waiting for the machine to be idle before each measured run; 0 disables),
// BENCH_REPEATS (default 3): the pair is measured that many times, the order reversed on even repeats, and
// the verdict is the median of the per-repeat ratios (shared virtual machines drift by tens of percent
// within a minute, so one pair alone proves little).
import { Buffer } from 'node:buffer';
import path from 'node:path';
import { startCanon } from './lib/canon.mjs';
import { setUpPinning } from './lib/cpu.mjs';
import { benchmarkServer } from './lib/load.mjs';
import { RESULTS_DIR, ROOT, UNLIMITED_RATE, intFromEnv } from './lib/options.mjs';
import { childEnv, get, makeTempDir, runMain, startServer } from './lib/processes.mjs';
import { headline, median, printTable, problemsOf, resultsHeader, sourceProblems, sourceVersion, warnAboutCpu, writeResults } from './lib/report.mjs';

const BARE_SERVER = path.join(ROOT, 'bench/baselines/bare-http.mjs');
const RESULTS_FILE = path.join(RESULTS_DIR, 'get-by-id.json');
const ADMIN_KEY = 'ck_bench_get_by_id_0123456789abcdef';
const TARGET_RATIO = 0.6;
const REPEATS = intFromEnv('BENCH_REPEATS', 3, 1, 15);
// Rate limiting stays on (its bookkeeping is part of every request's cost), with limits far above anything
// one core can serve so that no request is refused. CANON_RATE_LIMIT=off in the environment turns it off.
const RATE_LIMIT = process.env.CANON_RATE_LIMIT === 'off' ? 'off' : 'unlimited';

function canonTarget(pinned) {
  return {
    name: 'canon',
    label: 'Canon GET /v2/products/{id}',
    start: (port) => {
      const dir = makeTempDir('canon-bench-');
      return startCanon(port, { databaseUrl: `sqlite:${path.join(dir, 'canon.db')}`, adminKey: ADMIN_KEY, pinned, seed: true, rateLimit: RATE_LIMIT });
    },
    prepare: async (base) => {
      const headers = { 'x-api-key': ADMIN_KEY };
      const list = await get(`${base}/v2/products?limit=1`, headers);
      if (list.status !== 200) throw new Error(`GET /v2/products?limit=1 answered ${list.status}: ${list.body.slice(0, 500)}`);
      const id = JSON.parse(list.body).data?.[0]?.id;
      if (typeof id !== 'string') throw new Error(`GET /v2/products?limit=1 returned no product (seeding off?): ${list.body.slice(0, 500)}`);
      const url = `${base}/v2/products/${encodeURIComponent(id)}`;
      const one = await get(url, headers);
      if (one.status !== 200) throw new Error(`GET /v2/products/${id} answered ${one.status}: ${one.body.slice(0, 500)}`);
      if (JSON.parse(one.body).id !== id) throw new Error(`GET /v2/products/${id} returned another resource: ${one.body.slice(0, 500)}`);
      for (const header of ['etag', 'last-modified', 'x-request-id']) {
        if (!one.headers[header]) throw new Error(`GET /v2/products/${id} has no ${header} header`);
      }
      return { url, headers, check: { status: one.status, bodyBytes: Buffer.byteLength(one.body), contentType: one.headers['content-type'] } };
    },
  };
}

function bareTarget(pinned) {
  return {
    name: 'bare',
    label: 'bare node:http (fixed JSON)',
    start: (port) => startServer('bare-http', BARE_SERVER, [], childEnv({ PORT: String(port), HOST: '127.0.0.1' }), pinned),
    prepare: async (base) => {
      const url = `${base}/v2/products/baseline`;
      const one = await get(url);
      if (one.status !== 200) throw new Error(`bare-http answered ${one.status}`);
      JSON.parse(one.body);
      return { url, headers: {}, check: { status: one.status, bodyBytes: Buffer.byteLength(one.body), contentType: one.headers['content-type'] } };
    },
  };
}

async function main() {
  const pinning = setUpPinning();
  headline(`GET by id (${REPEATS} repeats)`, pinning);

  const runs = [];
  for (let i = 1; i <= REPEATS; i++) {
    const order = i % 2 === 0 ? ['bare', 'canon'] : ['canon', 'bare'];
    const results = {};
    for (const name of order) {
      const target = name === 'canon' ? canonTarget(pinning.pinned) : bareTarget(pinning.pinned);
      results[name] = await benchmarkServer({ ...target, label: `run ${i}: ${target.label}` });
    }
    runs.push({
      run: i,
      order,
      results,
      ratio: results.canon.requestsPerSecond.average / results.bare.requestsPerSecond.average,
      cpuPerRequestRatio: results.bare.serverCpuMicrosPerRequest / results.canon.serverCpuMicrosPerRequest,
    });
  }
  const ratio = median(runs.map((r) => r.ratio));
  const source = sourceVersion();
  const problems = [...runs.flatMap((r) => [...problemsOf(r.results.canon), ...problemsOf(r.results.bare)]), ...sourceProblems(source)];
  const rows = runs.flatMap((r) => [r.results.canon, r.results.bare]);

  console.log('');
  printTable(rows);
  console.log('');
  for (const r of runs) {
    console.log(
      `run ${r.run} (${r.order.join(' then ')}): Canon/bare requests/s ratio ${r.ratio.toFixed(2)}x; bare/Canon server CPU per request ${r.cpuPerRequestRatio.toFixed(2)}x`,
    );
  }
  const verdict = problems.length > 0 ? 'INVALID RUN, see below' : `target >= ${TARGET_RATIO}x: ${ratio >= TARGET_RATIO ? 'MET' : 'NOT MET'}`;
  console.log(`Canon/bare requests/s ratio, median of ${REPEATS}: ${ratio.toFixed(2)}x (${verdict})`);
  const { canon, bare } = runs[0].results;
  console.log(`Canon response: ${canon.check.bodyBytes} bytes, bare response: ${bare.check.bodyBytes} bytes`);
  if (pinning.pinned) console.log(`server CPU affinity as seen in /proc: Canon ${canon.serverAllowedCpus ?? 'n/a'}, bare ${bare.serverAllowedCpus ?? 'n/a'}`);
  warnAboutCpu(rows);

  writeResults(RESULTS_FILE, {
    ...resultsHeader('get-by-id', source, pinning, {
      repeats: REPEATS,
      order: 'per repeat: canon then bare, reversed on even repeats; one server at a time; verdict on the median ratio',
      canonRateLimit: RATE_LIMIT === 'off' ? 'off' : `on, ${UNLIMITED_RATE} per principal, per IP and global`,
    }),
    runs,
    ratio,
    target: TARGET_RATIO,
    targetMet: problems.length === 0 && ratio >= TARGET_RATIO,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
