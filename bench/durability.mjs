#!/usr/bin/env node
// Benchmark (issue 13.9): what SQLite's durable default costs a write: POST /v2/products with synchronous=FULL vs NORMAL.
//
//   npm run build && node bench/durability.mjs
//
// Each configuration runs in its own Canon process on a fresh SQLite file on the same disk, pinned to core 0
// (client on core 1); the pair runs side by side and is loaded in alternating slices, repeated BENCH_REPEATS
// times (default 3; the leader alternates), verdict on the median ratio. A distinct body per request, no
// Idempotency-Key, rate limiting on with limits nothing reaches. Results go to bench/results/durability.json.
import path from 'node:path';
import { setUpPinning } from './lib/cpu.mjs';
import { pairRun as runPair } from './lib/pair-run.mjs';
import { RESULTS_DIR, fmt, intFromEnv } from './lib/options.mjs';
import { request, runMain } from './lib/processes.mjs';
import { headline, median, printTable, problemsOf, resultsHeader, sourceProblems, sourceVersion, warnAboutCpu, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'durability.json');
const ADMIN_KEY = 'ck_bench_durability_0123456789abcdef';
const HEADERS = { 'x-api-key': ADMIN_KEY };
const REPEATS = intFromEnv('BENCH_REPEATS', 3, 1, 10);

let bodies = 0;
function nextBody() {
  bodies++;
  return JSON.stringify({ name: `Durable product ${bodies}`, price: { amount: 100 + (bodies % 100_000), currency: 'EUR' }, status: 'active', tags: [] });
}

const load = (base) => ({
  url: base,
  headers: HEADERS,
  requests: [{ method: 'POST', path: '/v2/products', setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'content-type': 'application/json' }, body: nextBody() }) }],
});

async function prepare(base) {
  const res = await request('POST', `${base}/v2/products`, { headers: HEADERS, body: nextBody(), timeoutMs: 5000 });
  if (res.status !== 201) throw new Error(`POST /v2/products answered ${res.status}: ${res.body.slice(0, 300)}`);
  return { load: load(base) };
}

/** The NORMAL/FULL pair (bench/lib/pair-run.mjs): `synchronous` is what differs. */
function pairRun(pinned, run, configs) {
  return runPair({
    pinned,
    run,
    configs: configs.map((c) => ({ ...c, prepare })),
    adminKey: ADMIN_KEY,
    dirPrefix: 'canon-bench-durability-',
    startOptions: (c) => ({ env: { CANON_SQLITE_SYNCHRONOUS: c.synchronous } }),
  });
}

async function main() {
  const pinning = setUpPinning();
  headline(`durability (${REPEATS} repeats)`, pinning);
  const runs = [];
  for (let i = 1; i <= REPEATS; i++) {
    const pair = [
      { key: 'normal', label: `run ${i}: POST, synchronous=NORMAL`, synchronous: 'normal' },
      { key: 'full', label: `run ${i}: POST, synchronous=FULL (default)`, synchronous: 'full' },
    ];
    const results = await pairRun(pinning.pinned, i, i % 2 === 0 ? pair.reverse() : pair);
    runs.push({
      run: i,
      results,
      fullShareOfNormal: results.full.requestsPerSecond.average / results.normal.requestsPerSecond.average,
      latencyFullOverNormal: results.full.latencyMs.mean / results.normal.latencyMs.mean,
      cpuFullOverNormal: results.full.serverCpuMicrosPerRequest / results.normal.serverCpuMicrosPerRequest,
    });
  }
  const rows = runs.flatMap((r) => [r.results.normal, r.results.full]);
  const source = sourceVersion();
  const problems = sourceProblems(source).concat(runs.flatMap((r) => [...problemsOf(r.results.normal, 201), ...problemsOf(r.results.full, 201)]));
  console.log('');
  printTable(rows, { first: 'configuration' });
  console.log('');
  for (const r of runs)
    console.log(
      `run ${r.run}: req/s FULL / NORMAL ${fmt(r.fullShareOfNormal, 2)}x; mean latency FULL / NORMAL ${fmt(r.latencyFullOverNormal, 2)}x; server CPU per request FULL / NORMAL ${fmt(r.cpuFullOverNormal, 2)}x`,
    );
  const overall = {
    fullShareOfNormal: median(runs.map((r) => r.fullShareOfNormal)),
    latencyFullOverNormal: median(runs.map((r) => r.latencyFullOverNormal)),
    cpuFullOverNormal: median(runs.map((r) => r.cpuFullOverNormal)),
  };
  console.log(
    `median of ${REPEATS}: req/s FULL / NORMAL ${fmt(overall.fullShareOfNormal, 2)}x; mean latency FULL / NORMAL ${fmt(overall.latencyFullOverNormal, 2)}x; server CPU per request FULL / NORMAL ${fmt(overall.cpuFullOverNormal, 2)}x`,
  );
  warnAboutCpu(rows);
  writeResults(RESULTS_FILE, {
    ...resultsHeader('durability', source, pinning, { repeats: REPEATS, order: 'per repeat: the NORMAL/FULL pair side by side, alternating slices; the leader alternates' }),
    runs,
    overall,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
