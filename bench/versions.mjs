#!/usr/bin/env node
// Benchmark (issue 16): what serving v1 through change modules costs against v2, and what the version layer costs v2 against the build before it.
//
//   npm run build && node bench/versions.mjs
//
// (1) One `canon serve` on SQLite with BENCH_PRODUCTS products: GET /v1/products/{id} against GET /v2/products/{id},
//     then GET /v1/products?limit=20 against GET /v2/products?limit=20, each pair in alternating slices
//     (bench/lib/interleave.mjs). Targets: a v1 read costs at most 1.10× a v2 read, a v1 page at most 1.15× a v2
//     page (so v1/v2 throughput ≥ 0.909 and ≥ 0.870).
// (2) GET /v2/products/{id} on this checkout against the build at BENCH_BASE_ROOT (default /tmp/canon-v16-base: a
//     worktree of 69d3d59, the commit before issue 16, built with npx tsc), each on its own SQLite file with the
//     same products, side by side in alternating slices; the same for the 20-item page. Target: v2 loses ≤ 2 %.
// BENCH_REPEATS (default 1) repeats of everything; verdicts on the medians (part (2): use an even count, the
// servers' start order turns every repeat). Results go to bench/results/versions.json.
// BENCH_VERSIONS_PARTS=base runs part (2) alone; BENCH_NOW_ROOT puts another build (a worktree) in this checkout's
// place in part (2), so two earlier commits can be compared, in either order, and a build against itself (the
// harness's own bias: the same code on both sides should give 1.000×).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createProducts, reportProfile, startCanon } from './lib/canon.mjs';
import { setUpPinning } from './lib/cpu.mjs';
import { measureInterleaved } from './lib/interleave.mjs';
import { RESULTS_DIR, fmt, intFromEnv } from './lib/options.mjs';
import { freePort, getJson, makeTempDir, runMain, stopServer, waitUntilReady } from './lib/processes.mjs';
import { headline, median, printTable, problemsOf, resultsHeader, sourceProblems, sourceVersion, warnAboutCpu, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'versions.json');
const ADMIN_KEY = 'ck_bench_versions_0123456789abcdef';
const HEADERS = { 'x-api-key': ADMIN_KEY };
const PRODUCTS = intFromEnv('BENCH_PRODUCTS', 500, 50, 100_000);
const REPEATS = intFromEnv('BENCH_REPEATS', 1, 1, 10);
const BASE_ROOT = path.resolve(process.env.BENCH_BASE_ROOT ?? '/tmp/canon-v16-base');
const BASE_CLI = path.join(BASE_ROOT, 'dist/src/cli/main.js');
const NOW_ROOT = process.env.BENCH_NOW_ROOT ? path.resolve(process.env.BENCH_NOW_ROOT) : undefined;
const NOW_CLI = NOW_ROOT ? path.join(NOW_ROOT, 'dist/src/cli/main.js') : undefined;
const PARTS = process.env.BENCH_VERSIONS_PARTS ?? 'both';
if (!['both', 'base'].includes(PARTS)) throw new Error(`BENCH_VERSIONS_PARTS is both or base, not ${PARTS}`);
const TARGETS = { v1ReadCost: 1.1, v1ListCost: 1.15, v2Share: 0.98 };

let pinning;

async function serve(name, cli) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const databaseUrl = `sqlite:${path.join(makeTempDir('canon-bench-versions-'), 'canon.db')}`;
  const server = startCanon(port, { databaseUrl, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: name, name, env: { CANON_WORKER: 'off' }, ...(cli ? { cli } : {}) });
  await waitUntilReady(server, base);
  const ids = await createProducts(base, HEADERS, PRODUCTS, { label: name });
  return { server, base, id: ids[Math.floor(ids.length / 2)] };
}

const load = (base, p) => ({ url: `${base}${p}`, headers: HEADERS });

/** A over B in alternating slices: their results and A's throughput over B's. */
async function pair(a, b) {
  const [ra, rb] = await measureInterleaved([a, b]);
  return { a: ra, b: rb, ratio: ra.requestsPerSecond.average / rb.requestsPerSecond.average };
}

async function repeat(run) {
  const out = {};
  if (PARTS === 'both') await versionPairs(run, out);
  if (existsSync(BASE_CLI)) await basePairs(run, out);
  return out;
}

/** Part (1): v1 against v2 on one server of this checkout. */
async function versionPairs(run, out) {
  const now = await serve(`canon-versions-${run}`);
  try {
    for (const p of [`/v1/products/${now.id}`, `/v1/products?limit=20`]) {
      const res = await getJson(`${now.base}${p}`, HEADERS);
      if (res.res.status !== 200) throw new Error(`GET ${p} answered ${res.res.status}`);
    }
    out.read = await pair(
      { server: now.server, load: load(now.base, `/v1/products/${now.id}`), label: `run ${run}: GET /v1/products/{id}`, name: `v1-read-${run}` },
      { server: now.server, load: load(now.base, `/v2/products/${now.id}`), label: `run ${run}: GET /v2/products/{id}`, name: `v2-read-${run}` },
    );
    out.list = await pair(
      { server: now.server, load: load(now.base, '/v1/products?limit=20'), label: `run ${run}: GET /v1/products?limit=20`, name: `v1-list-${run}` },
      { server: now.server, load: load(now.base, '/v2/products?limit=20'), label: `run ${run}: GET /v2/products?limit=20`, name: `v2-list-${run}` },
    );
  } finally {
    await stopServer(now.server);
    reportProfile(`canon-versions-${run}`);
  }
}

/** Part (2): v2 on this build (or BENCH_NOW_ROOT's) against the build at BENCH_BASE_ROOT. */
async function basePairs(run, out) {
  // A fresh server that only ever sees v2, like the one before issue 16: a process that has also served v1
  // has its rendering code optimised for both shapes, which is a different (and fair, but other) question.
  // Which server starts (and is filled) first turns every repeat: measured with one build on both sides at
  // 05bca8a (2026-11-28, 5 repeats), the one started first served 2.1% fewer pages (every repeat 0.917–0.984×) and
  // 1.1% fewer reads; with an even BENCH_REPEATS the order weighs on both sides alike.
  const nowFirst = run % 2 === 1;
  const first = await serve(nowFirst ? `canon-versions-v2-${run}` : `canon-v16-base-${run}`, nowFirst ? NOW_CLI : BASE_CLI);
  const second = await serve(nowFirst ? `canon-v16-base-${run}` : `canon-versions-v2-${run}`, nowFirst ? BASE_CLI : NOW_CLI);
  const [now, before] = nowFirst ? [first, second] : [second, first];
  try {
    out.v2Read = await pair(
      { server: now.server, load: load(now.base, `/v2/products/${now.id}`), label: `run ${run}: GET /v2/products/{id}, this build`, name: `now-read-${run}` },
      { server: before.server, load: load(before.base, `/v2/products/${before.id}`), label: `run ${run}: GET /v2/products/{id}, before issue 16`, name: `base-read-${run}` },
    );
    out.v2List = await pair(
      { server: now.server, load: load(now.base, '/v2/products?limit=20'), label: `run ${run}: GET /v2/products?limit=20, this build`, name: `now-list-${run}` },
      { server: before.server, load: load(before.base, '/v2/products?limit=20'), label: `run ${run}: GET /v2/products?limit=20, before issue 16`, name: `base-list-${run}` },
    );
  } finally {
    await stopServer(before.server);
    await stopServer(now.server);
  }
}

async function main() {
  pinning = setUpPinning();
  headline(`versions (${fmt(PRODUCTS)} products, ${REPEATS} repeats)`, pinning);
  if (!existsSync(BASE_CLI))
    console.log(
      `bench: ${BASE_CLI} is missing, so part (2) is skipped: git worktree add -f ${BASE_ROOT} 69d3d59 && ln -s $PWD/node_modules ${BASE_ROOT}/node_modules && (cd ${BASE_ROOT} && npx tsc -p tsconfig.json)`,
    );
  const runs = [];
  for (let r = 1; r <= REPEATS; r++) runs.push(await repeat(r));
  const rows = runs.flatMap((o) => Object.values(o).flatMap((p) => [p.a, p.b]));
  console.log('');
  printTable(rows, { first: 'measured' });
  console.log('');
  const verdicts = {};
  const costOf = (key) => median(runs.map((o) => 1 / o[key].ratio));
  if (runs[0].read) {
    verdicts.v1Read = { value: costOf('read'), target: TARGETS.v1ReadCost, met: costOf('read') <= TARGETS.v1ReadCost };
    verdicts.v1List = { value: costOf('list'), target: TARGETS.v1ListCost, met: costOf('list') <= TARGETS.v1ListCost };
    console.log(`a v1 read costs ${fmt(verdicts.v1Read.value, 3)}x a v2 read (target <= ${TARGETS.v1ReadCost}x: ${verdicts.v1Read.met ? 'MET' : 'NOT MET'})`);
    console.log(`a v1 20-item page costs ${fmt(verdicts.v1List.value, 3)}x a v2 page (target <= ${TARGETS.v1ListCost}x: ${verdicts.v1List.met ? 'MET' : 'NOT MET'})`);
  }
  if (runs[0].v2Read) {
    for (const key of ['v2Read', 'v2List']) {
      const share = median(runs.map((o) => o[key].ratio));
      console.log(`${key} per repeat: ${runs.map((o) => fmt(o[key].ratio, 3)).join(' / ')}`);
      verdicts[key] = { value: share, target: TARGETS.v2Share, met: share >= TARGETS.v2Share };
      console.log(
        `${key === 'v2Read' ? 'v2 read' : 'v2 page'}, ${NOW_ROOT ?? 'this build'} / ${BASE_ROOT}: ${fmt(share, 3)}x (target >= ${TARGETS.v2Share}x: ${verdicts[key].met ? 'MET' : 'NOT MET'})`,
      );
    }
  }
  warnAboutCpu(rows);
  const source = sourceVersion();
  const problems = sourceProblems(source).concat(rows.flatMap((r) => problemsOf(r, 200)));
  writeResults(RESULTS_FILE, {
    ...resultsHeader('versions', source, pinning, { products: PRODUCTS, repeats: REPEATS, baseline: BASE_CLI, now: NOW_CLI ?? 'this checkout', parts: PARTS }),
    results: runs,
    verdicts,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
