#!/usr/bin/env node
// Benchmark (issue 28): what canon-client adds to a call over a bare fetch of the same request, in the same run.
//
//   npm run build && node bench/client.mjs
//
// One `canon serve` on SQLite (worker off) with BENCH_PRODUCTS products, on the server core; this process, the
// client, on the client core. Two requests: GET /v2/products/{id}, and the first 20-item page of GET /v2/products
// (`limit=20`). Each is made two ways: a bare `fetch` + `res.json()` with the same headers, and canon-client
// (`client.products.get(id)`; `client.products.list({ limit: 20 }).pages()`'s first page).
//
// (1) End to end: the two ways in alternating slices (A B B A …) of BENCH_CLIENT_CALLS calls each,
//     BENCH_CLIENT_CONCURRENCY in flight, BENCH_SLICES slices per way. Each pair of adjacent slices gives one
//     client/bare ratio of wall time per call; the verdict is on their median, which a burst of load from other
//     processes on a shared machine moves far less than the totals (also reported, with CPU per call).
// (2) The client's own cost, without network or server: the same two ways in this process against a fetch that
//     answers at once with the bytes the server sent for that request (a fresh Response each call): µs of CPU per
//     call, interleaved the same way. The difference is what the client adds to every call.
// Target (issue 28): overhead per call at most 10 % (median client/bare ratio ≤ 1.10) for both requests.
// BENCH_REPEATS (default 1) repeats everything; verdicts on the medians of the runs. Results: bench/results/client.json.
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

/** Two ways of one request in alternating slices (A B B A …): per way wall ms and CPU µs per call, and the median of the adjacent pairs' ratios. */
async function compare(label, ways, calls = CALLS, warmup = WARMUP_CALLS) {
  for (const way of ways) await slice(way.call, warmup);
  const acc = ways.map(() => ({ ms: 0, cpuMicros: 0, calls: 0 }));
  const pairs = [];
  let pending;
  for (let round = 0; round < settings.slices * 2; round++) {
    const which = (round % 2) ^ (Math.floor(round / 2) % 2);
    const r = await slice(ways[which].call, calls);
    const a = acc[which];
    a.ms += r.ms;
    a.cpuMicros += r.cpuMicros;
    a.calls += calls;
    // Rounds 2k and 2k+1 are one slice of each way, side by side in time.
    if (round % 2 === 0) pending = { [which]: r };
    else {
      pending[which] = r;
      pairs.push({ time: pending[1].ms / pending[0].ms, cpu: pending[1].cpuMicros / pending[0].cpuMicros });
    }
  }
  const results = ways.map((way, i) => ({
    way: way.name,
    calls: acc[i].calls,
    msPerCall: acc[i].ms / acc[i].calls,
    callsPerSecond: (acc[i].calls / acc[i].ms) * 1000,
    cpuMicrosPerCall: acc[i].cpuMicros / acc[i].calls,
  }));
  const [bare, client] = results;
  const ratio = median(pairs.map((p) => p.time));
  const cpuRatio = median(pairs.map((p) => p.cpu));
  console.log(
    `bench: ${label}: bare ${fmt(bare.msPerCall, 3)} ms/call (${fmt(bare.cpuMicrosPerCall, 1)} µs CPU), client ${fmt(client.msPerCall, 3)} ms/call ` +
      `(${fmt(client.cpuMicrosPerCall, 1)} µs CPU): median pair ratio time ${fmt(ratio, 3)}x, CPU ${fmt(cpuRatio, 3)}x; totals ${fmt(client.msPerCall / bare.msPerCall, 3)}x, ` +
      `${client.cpuMicrosPerCall >= bare.cpuMicrosPerCall ? '+' : ''}${fmt(client.cpuMicrosPerCall - bare.cpuMicrosPerCall, 1)} µs CPU per call`,
  );
  return { label, bare, client, ratio, cpuRatio, pairs, totalRatio: client.msPerCall / bare.msPerCall, cpuMicrosAdded: client.cpuMicrosPerCall - bare.cpuMicrosPerCall };
}

/** A fetch that answers at once with `bytes` and `headers` (a fresh Response each call): the network and the server taken out. */
function cannedFetch(bytes, headers) {
  return async () => new globalThis.Response(bytes, { status: 200, headers });
}

/** The bytes and headers the server answers `url` with. */
async function capture(url) {
  const res = await fetch(url, { headers: HEADERS });
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  const headers = {};
  for (const name of ['content-type', 'etag', 'x-request-id', 'cache-control']) if (res.headers.get(name) !== null) headers[name] = res.headers.get(name);
  return { bytes: new Uint8Array(await res.arrayBuffer()), headers };
}

/** The first page of a listing, as the client's users read one page. */
async function firstPage(client) {
  const pages = client.products.list({ limit: 20 }).pages();
  const first = await pages.next();
  await pages.return();
  if (first.value.data.length !== 20) throw new Error(`a page of ${first.value.data.length}`);
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
    const read = await compare(`run ${run}: GET /v2/products/{id}, end to end`, [
      { name: 'bare fetch', call: async () => (await fetch(byId, { headers: HEADERS })).json() },
      { name: 'canon-client', call: () => client.products.get(id) },
    ]);
    const list = await compare(`run ${run}: GET /v2/products?limit=20, end to end`, [
      { name: 'bare fetch', call: async () => (await fetch(page, { headers: HEADERS })).json() },
      { name: 'canon-client', call: () => firstPage(client) },
    ]);
    // (2) The client's own cost: the same calls against the captured answers, in this process.
    const one = await capture(byId);
    const twenty = await capture(page);
    const oneFetch = cannedFetch(one.bytes, one.headers);
    const pageFetch = cannedFetch(twenty.bytes, twenty.headers);
    const inProcess = CALLS * 10;
    const readOwn = await compare(
      `run ${run}: GET /v2/products/{id}, no network`,
      [
        { name: 'bare fetch', call: async () => (await oneFetch(byId, { headers: HEADERS })).json() },
        {
          name: 'canon-client',
          call: (() => {
            const c = canon.createClient({ baseUrl: base, apiKey: ADMIN_KEY, fetch: oneFetch });
            return () => c.products.get(id);
          })(),
        },
      ],
      inProcess,
      inProcess,
    );
    const listOwn = await compare(
      `run ${run}: GET /v2/products?limit=20, no network`,
      [
        { name: 'bare fetch', call: async () => (await pageFetch(page, { headers: HEADERS })).json() },
        {
          name: 'canon-client',
          call: (() => {
            const c = canon.createClient({ baseUrl: base, apiKey: ADMIN_KEY, fetch: pageFetch });
            return () => firstPage(c);
          })(),
        },
      ],
      inProcess,
      inProcess,
    );
    return { read, list, readOwn, listOwn };
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
  console.log(verdictText('GET by id, client/bare time per call (median of adjacent slice pairs)', verdicts.read));
  console.log(verdictText('20-item page, client/bare time per call (median of adjacent slice pairs)', verdicts.list));
  for (const [name, key] of [
    ['GET by id', 'readOwn'],
    ['20-item page', 'listOwn'],
  ]) {
    const added = median(runs.map((r) => r[key].cpuMicrosAdded));
    const endToEnd = median(runs.map((r) => r[key === 'readOwn' ? 'read' : 'list'].bare.msPerCall * 1000));
    console.log(
      `${name}: the client adds ${fmt(added, 1)} µs of CPU per call (no network), ${fmt((added / endToEnd) * 100, 1)} % of a bare call's ${fmt(endToEnd, 0)} µs end to end`,
    );
  }
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
