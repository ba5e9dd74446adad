#!/usr/bin/env node
// Benchmark (issue 28): what canon-client adds to a call over a bare fetch of the same request, in the same run.
//
//   npm run build && node bench/client.mjs
//
// One `canon serve` on SQLite (worker off) with BENCH_PRODUCTS products, on the server core; this process, the
// client, on the client core. Two requests: GET /v2/products/{id}, and the first 20-item page of GET /v2/products
// (`limit=20`). Each is made two ways: a bare `fetch` + `res.json()` with the same headers, and canon-client
// (`client.products.get(id)`; `client.products.list({ limit: 20 }).pages()`'s first page). The two ways run in
// alternating slices (A B B A …, as bench/lib/interleave.mjs does for servers) of BENCH_CLIENT_CALLS calls each,
// BENCH_CLIENT_CONCURRENCY calls in flight, so machine drift weighs on both alike. Reported per way: wall time per
// call (mean over all slices), calls/s, and this process's CPU per call (process.cpuUsage: the client's own cost).
// Target (issue 28): the client's overhead per call is at most 10 % (client/bare wall time per call ≤ 1.10) for
// both requests. BENCH_REPEATS (default 1) repeats everything; the verdict is on the medians. Results go to
// bench/results/client.json.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createProducts, reportProfile, startCanon } from './lib/canon.mjs';
import { setUpPinning } from './lib/cpu.mjs';
import { ROOT, RESULTS_DIR, fmt, intFromEnv, settings } from './lib/options.mjs';
import { freePort, getJson, makeTempDir, runMain, stopServer, waitUntilReady } from './lib/processes.mjs';
import { median, resultsHeader, sourceProblems, sourceVersion, verdict, verdictText, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'client.json');
const ADMIN_KEY = 'ck_bench_client_0123456789abcdefgh';
const HEADERS = { 'x-api-key': ADMIN_KEY, accept: 'application/json' };
const PRODUCTS = intFromEnv('BENCH_PRODUCTS', 200, 20, 100_000);
const CALLS = intFromEnv('BENCH_CLIENT_CALLS', 1000, 10, 1_000_000);
const CONCURRENCY = intFromEnv('BENCH_CLIENT_CONCURRENCY', 1, 1, 256);
const WARMUP_CALLS = intFromEnv('BENCH_CLIENT_WARMUP_CALLS', 2000, 0, 1_000_000);
const REPEATS = intFromEnv('BENCH_REPEATS', 1, 1, 10);
const TARGET = 1.1;

const CLIENT_ENTRY = path.join(ROOT, 'packages/client/dist/index.js');

/** Runs `calls` calls of `call`, `concurrency` at a time; wall ms and this process's CPU µs. */
async function slice(call, calls) {
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const lane = async () => {
    while (next < calls) {
      next++;
      await call();
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, calls) }, lane));
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMicros: used.user + used.system };
}

/** Two ways of one request in alternating slices; per way: wall ms per call, calls/s, CPU µs per call. */
async function compare(label, ways) {
  for (const way of ways) await slice(way.call, WARMUP_CALLS);
  const acc = ways.map(() => ({ ms: 0, cpuMicros: 0, calls: 0, perSlice: [] }));
  for (let round = 0; round < settings.slices * 2; round++) {
    const which = (round % 2) ^ (Math.floor(round / 2) % 2);
    const r = await slice(ways[which].call, CALLS);
    const a = acc[which];
    a.ms += r.ms;
    a.cpuMicros += r.cpuMicros;
    a.calls += CALLS;
    a.perSlice.push(r.ms / CALLS);
  }
  const results = ways.map((way, i) => ({
    way: way.name,
    calls: acc[i].calls,
    msPerCall: acc[i].ms / acc[i].calls,
    callsPerSecond: (acc[i].calls / acc[i].ms) * 1000,
    cpuMicrosPerCall: acc[i].cpuMicros / acc[i].calls,
    msPerCallBySlice: acc[i].perSlice,
  }));
  const [bare, client] = results;
  const ratio = client.msPerCall / bare.msPerCall;
  const cpuRatio = client.cpuMicrosPerCall / bare.cpuMicrosPerCall;
  console.log(
    `bench: ${label}: bare ${fmt(bare.msPerCall, 3)} ms/call (${fmt(bare.callsPerSecond)} calls/s, ${fmt(bare.cpuMicrosPerCall, 1)} µs CPU), ` +
      `client ${fmt(client.msPerCall, 3)} ms/call (${fmt(client.callsPerSecond)} calls/s, ${fmt(client.cpuMicrosPerCall, 1)} µs CPU): ` +
      `time ${fmt(ratio, 3)}x, client CPU ${fmt(cpuRatio, 3)}x (+${fmt(client.cpuMicrosPerCall - bare.cpuMicrosPerCall, 1)} µs)`,
  );
  return { label, bare, client, ratio, cpuRatio, cpuMicrosAdded: client.cpuMicrosPerCall - bare.cpuMicrosPerCall };
}

async function repeat(run, pinning, canon) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const databaseUrl = `sqlite:${path.join(makeTempDir('canon-bench-client-'), 'canon.db')}`;
  const name = `canon-client-${run}`;
  const server = startCanon(port, { databaseUrl, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: name, name, env: { CANON_WORKER: 'off' } });
  try {
    await waitUntilReady(server, base);
    const ids = await createProducts(base, HEADERS, PRODUCTS, { label: name });
    const id = ids[Math.floor(ids.length / 2)];
    await getJson(`${base}/v2/products/${id}`, HEADERS);
    const client = canon.createClient({ baseUrl: base, apiKey: ADMIN_KEY });
    const byId = `${base}/v2/products/${id}`;
    const page = `${base}/v2/products?limit=20`;
    const read = await compare(`run ${run}: GET /v2/products/{id}`, [
      { name: 'bare fetch', call: async () => (await fetch(byId, { headers: HEADERS })).json() },
      { name: 'canon-client', call: () => client.products.get(id) },
    ]);
    const list = await compare(`run ${run}: GET /v2/products?limit=20`, [
      { name: 'bare fetch', call: async () => (await fetch(page, { headers: HEADERS })).json() },
      {
        name: 'canon-client',
        call: async () => {
          const pages = client.products.list({ limit: 20 }).pages();
          const first = await pages.next();
          await pages.return();
          if (first.value.data.length !== 20) throw new Error(`a page of ${first.value.data.length}`);
        },
      },
    ]);
    return { read, list };
  } finally {
    await stopServer(server);
    reportProfile(name);
  }
}

async function main() {
  const pinning = setUpPinning();
  const canon = await import(pathToFileURL(CLIENT_ENTRY).href);
  console.log(
    `bench: canon-client vs bare fetch | node ${process.version} | ${pinning.pinned ? `server on core ${pinning.serverCore}, client on core ${pinning.clientCore ?? 'unpinned'}` : 'UNPINNED'} | ` +
      `${settings.slices} slices per way of ${CALLS} calls, ${CONCURRENCY} in flight, ${WARMUP_CALLS} warm-up calls, ${REPEATS} repeat(s)`,
  );
  const runs = [];
  for (let run = 1; run <= REPEATS; run++) runs.push(await repeat(run, pinning, canon));
  const verdicts = {
    read: verdict(median(runs.map((r) => r.read.ratio)), TARGET, true),
    list: verdict(median(runs.map((r) => r.list.ratio)), TARGET, true),
  };
  console.log(verdictText('GET by id, client/bare time per call', verdicts.read));
  console.log(verdictText('20-item page, client/bare time per call', verdicts.list));
  const source = sourceVersion();
  const problems = sourceProblems(source);
  for (const p of problems) console.warn(`bench: INVALID: ${p}`);
  writeResults(RESULTS_FILE, {
    ...resultsHeader('client', source, pinning, {
      client: 'canon-client and bare fetch (Node undici), in the benchmark process',
      callsPerSlice: CALLS,
      concurrency: CONCURRENCY,
      slicesPerWay: settings.slices,
      warmupCalls: WARMUP_CALLS,
      products: PRODUCTS,
      repeats: REPEATS,
    }),
    runs,
    verdicts,
    problems,
  });
  if (problems.length > 0 || !verdicts.read.met || !verdicts.list.met) process.exitCode = 1;
}

runMain(main);
