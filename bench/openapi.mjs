#!/usr/bin/env node
// Benchmark (issue 27): what the OpenAPI document and per-version input validation cost.
//
//   npm run build && node bench/openapi.mjs
//
// One `canon serve` on SQLite with BENCH_PRODUCTS products, each pair in alternating slices (bench/lib/interleave.mjs):
// (1) GET /v2/openapi.json (public, precomputed) against GET /v2/products/{id}: target >= 0.9x its throughput,
//     loaded by wrk (`apt-get install wrk`; bench/lib/wrk.mjs says why), then again by autocannon for the record;
// (2) POST /v1/products (checked in v1's shape, then translated and checked in v2's) against POST /v2/products:
//     target: a v1 write costs at most 1.10x a v2 write (v1/v2 throughput >= 0.909).
// v2 GET by id and page against the build before issue 27: `BENCH_BASE_ROOT=<worktree of 642b25d, built>
// node bench/versions.mjs` (its part 2). BENCH_REPEATS (default 1); verdicts on the medians. Results go to
// bench/results/openapi.json.
import path from 'node:path';
import { createProducts, reportProfile, startCanon } from './lib/canon.mjs';
import { setUpPinning } from './lib/cpu.mjs';
import { measureInterleaved } from './lib/interleave.mjs';
import { assertWrk } from './lib/wrk.mjs';
import { RESULTS_DIR, fmt, intFromEnv } from './lib/options.mjs';
import { freePort, getJson, makeTempDir, runMain, stopServer, waitUntilReady } from './lib/processes.mjs';
import { headline, median, printTable, problemsOf, resultsHeader, sourceProblems, sourceVersion, warnAboutCpu, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'openapi.json');
const ADMIN_KEY = 'ck_bench_openapi_0123456789abcdef';
const HEADERS = { 'x-api-key': ADMIN_KEY };
const PRODUCTS = intFromEnv('BENCH_PRODUCTS', 500, 50, 100_000);
const REPEATS = intFromEnv('BENCH_REPEATS', 1, 1, 10);
const TARGETS = { documentShare: 0.9, v1WriteCost: 1.1 };

let pinning;
let written = 0;

/** A distinct product per request, in each version's shape (distinct names keep every write a real insert). */
function product(version) {
  written++;
  const name = `Bench ${version} ${written}`;
  return JSON.stringify(version === 'v1' ? { name, price_cents: 1000 + (written % 500), currency: 'EUR' } : { name, price: { amount: 1000 + (written % 500), currency: 'EUR' } });
}

function writes(base, version) {
  return {
    url: base,
    headers: HEADERS,
    requests: [
      {
        method: 'POST',
        path: `/${version}/products`,
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'content-type': 'application/json' }, body: product(version) }),
      },
    ],
  };
}

async function pair(a, b) {
  const [ra, rb] = await measureInterleaved([a, b]);
  return { a: ra, b: rb, ratio: ra.requestsPerSecond.average / rb.requestsPerSecond.average };
}

async function repeat(run) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const databaseUrl = `sqlite:${path.join(makeTempDir('canon-bench-openapi-'), 'canon.db')}`;
  const name = `canon-openapi-${run}`;
  const server = startCanon(port, { databaseUrl, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: name, name, env: { CANON_WORKER: 'off' } });
  const out = {};
  try {
    await waitUntilReady(server, base);
    const ids = await createProducts(base, HEADERS, PRODUCTS, { label: name });
    const id = ids[Math.floor(ids.length / 2)];
    const doc = await getJson(`${base}/v2/openapi.json`, {});
    if (doc.res.status !== 200) throw new Error(`GET /v2/openapi.json answered ${doc.res.status}`);
    out.document = await pair(
      // As browsers and HTTP libraries ask for it: compressed (the document is ~390 KB of JSON, ~13 KB in Brotli).
      // Both loaded by wrk: autocannon's client, reading 13 KB answers in JavaScript, ran out of core first.
      {
        server,
        load: { engine: 'wrk', url: `${base}/v2/openapi.json`, headers: { 'accept-encoding': 'br, gzip' } },
        label: `run ${run}: GET /v2/openapi.json (br, wrk)`,
        name: `doc-${run}`,
      },
      { server, load: { engine: 'wrk', url: `${base}/v2/products/${id}`, headers: HEADERS }, label: `run ${run}: GET /v2/products/{id} (wrk)`, name: `read-${run}` },
    );
    // The same pair with autocannon, for the record: there the client, not the server, sets the document's rate.
    out.documentAutocannon = await pair(
      {
        server,
        load: { url: `${base}/v2/openapi.json`, headers: { 'accept-encoding': 'br, gzip' } },
        label: `run ${run}: GET /v2/openapi.json (br, autocannon)`,
        name: `doc-ac-${run}`,
      },
      { server, load: { url: `${base}/v2/products/${id}`, headers: HEADERS }, label: `run ${run}: GET /v2/products/{id} (autocannon)`, name: `read-ac-${run}` },
    );
    out.write = await pair(
      { server, load: writes(base, 'v1'), label: `run ${run}: POST /v1/products`, name: `v1-write-${run}` },
      { server, load: writes(base, 'v2'), label: `run ${run}: POST /v2/products`, name: `v2-write-${run}` },
    );
  } finally {
    await stopServer(server);
    reportProfile(name);
  }
  return out;
}

async function main() {
  assertWrk();
  pinning = setUpPinning();
  headline(`openapi (${fmt(PRODUCTS)} products, ${REPEATS} repeats)`, pinning);
  const runs = [];
  for (let r = 1; r <= REPEATS; r++) runs.push(await repeat(r));
  const rows = runs.flatMap((o) => Object.values(o).flatMap((p) => [p.a, p.b]));
  console.log('');
  printTable(rows, { first: 'measured' });
  console.log('');
  const share = median(runs.map((o) => o.document.ratio));
  const shareAutocannon = median(runs.map((o) => o.documentAutocannon.ratio));
  const cost = median(runs.map((o) => 1 / o.write.ratio));
  const verdicts = {
    document: { value: share, target: TARGETS.documentShare, met: share >= TARGETS.documentShare, loadGenerator: 'wrk', autocannon: shareAutocannon },
    v1Write: { value: cost, target: TARGETS.v1WriteCost, met: cost <= TARGETS.v1WriteCost },
  };
  console.log(`GET /v2/openapi.json / GET by id: ${fmt(share, 3)}x (target >= ${TARGETS.documentShare}x: ${verdicts.document.met ? 'MET' : 'NOT MET'})`);
  console.log(`(with autocannon as the client: ${fmt(shareAutocannon, 3)}x, client-bound)`);
  console.log(`a v1 write costs ${fmt(cost, 3)}x a v2 write (target <= ${TARGETS.v1WriteCost}x: ${verdicts.v1Write.met ? 'MET' : 'NOT MET'})`);
  warnAboutCpu(rows);
  const source = sourceVersion();
  const problems = sourceProblems(source).concat(
    runs.flatMap((o) => [
      ...problemsOf(o.document.a, 200),
      ...problemsOf(o.document.b, 200),
      ...problemsOf(o.documentAutocannon.a, 200),
      ...problemsOf(o.documentAutocannon.b, 200),
      ...problemsOf(o.write.a, 201),
      ...problemsOf(o.write.b, 201),
    ]),
  );
  writeResults(RESULTS_FILE, {
    ...resultsHeader('openapi', source, pinning, { products: PRODUCTS, repeats: REPEATS }),
    results: runs,
    verdicts,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length) console.log(`bench: the run is not valid:\n- ${problems.join('\n- ')}`);
}

runMain(main);
