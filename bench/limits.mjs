#!/usr/bin/env node
// Benchmark (issue 6): the cost of idempotency keys on POST and of rate limiting on GET by id, Canon on SQLite.
//
//   npm run bench:limits      (builds first)
//   node bench/limits.mjs     (expects a fresh build in dist/)
//
// (a) POST /v2/products with a fresh Idempotency-Key per request vs without a key (a distinct body per request
// either way); (b) GET /v2/products/{id} with rate limiting on (in-memory counters, limits 1000000000/1 so that
// nothing is refused) vs CANON_RATE_LIMIT=off. Every configuration runs in its own Canon process on a fresh
// SQLite file, pinned to core 0 (client on core 1), with its own warm-up. The two of a pair run side by side
// and are loaded in alternating slices (A B B A …), so that the machine's drift weighs on both alike; the
// pairs are repeated BENCH_REPEATS times (default 4), which leads reversed on even repeats; the verdicts are
// on the median ratio over the repeats (each run alone is printed too). Results go to bench/results/limits.json.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setUpPinning } from './lib/cpu.mjs';
import { pairRun as runPair } from './lib/pair-run.mjs';
import { RESULTS_DIR, fmt, intFromEnv } from './lib/options.mjs';
import { getJson, request, runMain } from './lib/processes.mjs';
import { headline, median, printTable, problemsOf, resultsHeader, sourceProblems, sourceVersion, verdict, verdictText, warnAboutCpu, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'limits.json');
const ADMIN_KEY = 'ck_bench_limits_0123456789abcdef';
const HEADERS = { 'x-api-key': ADMIN_KEY };
/** Even by default: odd and even repeats swap which configuration leads the slices, and both should count alike. */
const REPEATS = intFromEnv('BENCH_REPEATS', 4, 1, 10);
const TARGETS = { idempotencyCost: 1.15, rateLimitShare: 0.95 };

let bodies = 0;
/** A distinct product body per request. */
function nextBody() {
  bodies++;
  return JSON.stringify({ name: `Bench product ${bodies}`, price: { amount: 100 + (bodies % 100_000), currency: 'EUR' }, status: 'active', tags: [] });
}

/** autocannon requests: POST /v2/products, a new body (and, with `withKey`, a new Idempotency-Key) every time. */
function postRequests(withKey) {
  return [
    {
      method: 'POST',
      path: '/v2/products',
      setupRequest: (req) => ({
        ...req,
        headers: { ...req.headers, 'content-type': 'application/json', ...(withKey ? { 'idempotency-key': randomUUID() } : {}) },
        body: nextBody(),
      }),
    },
  ];
}

/** The pair of Canon processes of one comparison (bench/lib/pair-run.mjs); `rateLimit` is what differs. */
function pairRun(pinned, run, configs) {
  return runPair({ pinned, run, configs, adminKey: ADMIN_KEY, dirPrefix: 'canon-bench-limits-', startOptions: (c) => ({ rateLimit: c.rateLimit }) });
}

async function createProduct(base, headers = {}) {
  const res = await request('POST', `${base}/v2/products`, { headers: { ...HEADERS, ...headers }, body: nextBody(), timeoutMs: 5000 });
  if (res.status !== 201) throw new Error(`POST /v2/products answered ${res.status}: ${res.body.slice(0, 500)}`);
  return res;
}

const post = (withKey) => async (base) => {
  // With a key, a repeat must be replayed: proves the idempotency path is the one measured.
  const key = randomUUID();
  const body = nextBody();
  const send = () => request('POST', `${base}/v2/products`, { headers: { ...HEADERS, ...(withKey ? { 'idempotency-key': key } : {}) }, body, timeoutMs: 5000 });
  const [firstRes, again] = [await send(), await send()];
  if (firstRes.status !== 201 || again.status !== 201) throw new Error(`POST /v2/products answered ${firstRes.status}, then ${again.status}: ${again.body.slice(0, 500)}`);
  const replayed = again.headers['idempotent-replayed'] === 'true';
  if (replayed !== withKey)
    throw new Error(`POST /v2/products ${withKey ? 'with' : 'without'} a key: Idempotent-Replayed is ${again.headers['idempotent-replayed']} on the repeat`);
  return { load: { url: base, headers: HEADERS, requests: postRequests(withKey) }, check: { replayedOnRepeat: replayed } };
};

const getById = (rateLimited) => async (base) => {
  const id = JSON.parse((await createProduct(base)).body).id;
  const url = `${base}/v2/products/${id}`;
  const { res } = await getJson(url, HEADERS);
  const limited = res.headers['x-ratelimit-limit'] !== undefined;
  if (limited !== rateLimited) throw new Error(`GET by id with rate limiting ${rateLimited ? 'on' : 'off'}: X-RateLimit-Limit is ${res.headers['x-ratelimit-limit']}`);
  return { load: { url, headers: HEADERS }, check: { rateLimitHeader: res.headers['x-ratelimit-limit'] ?? null } };
};

async function main() {
  const pinning = setUpPinning();
  headline(`limits (${REPEATS} repeats)`, pinning);
  const runs = [];
  for (let i = 1; i <= REPEATS; i++) {
    const flip = (pair) => (i % 2 === 0 ? [...pair].reverse() : pair);
    const results = {};
    Object.assign(
      results,
      await pairRun(
        pinning.pinned,
        i,
        flip([
          { key: 'postWithoutKey', label: `run ${i}: POST without Idempotency-Key`, rateLimit: 'unlimited', prepare: post(false) },
          { key: 'postWithKey', label: `run ${i}: POST with a fresh Idempotency-Key`, rateLimit: 'unlimited', prepare: post(true) },
        ]),
      ),
    );
    Object.assign(
      results,
      await pairRun(
        pinning.pinned,
        i,
        flip([
          { key: 'getRateLimitOff', label: `run ${i}: GET by id, rate limiting off`, rateLimit: 'off', prepare: getById(false) },
          { key: 'getRateLimitOn', label: `run ${i}: GET by id, rate limiting on`, rateLimit: 'unlimited', prepare: getById(true) },
        ]),
      ),
    );
    const { postWithKey: k, postWithoutKey: nk, getRateLimitOn: on, getRateLimitOff: off } = results;
    runs.push({
      run: i,
      results,
      verdicts: {
        idempotencyRequestsPerSecond: verdict(nk.requestsPerSecond.average / k.requestsPerSecond.average, TARGETS.idempotencyCost, true),
        idempotencyMeanLatency: verdict(k.latencyMs.mean / nk.latencyMs.mean, TARGETS.idempotencyCost, true),
        idempotencyServerCpu: verdict(k.serverCpuMicrosPerRequest / nk.serverCpuMicrosPerRequest, TARGETS.idempotencyCost, true),
        rateLimitRequestsPerSecond: verdict(on.requestsPerSecond.average / off.requestsPerSecond.average, TARGETS.rateLimitShare),
      },
      rateLimitMeanLatency: on.latencyMs.mean / off.latencyMs.mean,
    });
  }

  const rows = runs.flatMap((r) => [r.results.postWithoutKey, r.results.postWithKey, r.results.getRateLimitOff, r.results.getRateLimitOn]);
  const source = sourceVersion();
  const problems = sourceProblems(source).concat(
    runs.flatMap((r) => [
      ...problemsOf(r.results.postWithoutKey, 201),
      ...problemsOf(r.results.postWithKey, 201),
      ...problemsOf(r.results.getRateLimitOff),
      ...problemsOf(r.results.getRateLimitOn),
    ]),
  );
  console.log('');
  printTable(rows, { first: 'configuration' });
  console.log('');
  for (const r of runs) {
    console.log(verdictText(`run ${r.run}: POST cost with key (req/s without / with)`, r.verdicts.idempotencyRequestsPerSecond));
    console.log(verdictText(`run ${r.run}: POST cost with key (mean latency with / without)`, r.verdicts.idempotencyMeanLatency));
    console.log(verdictText(`run ${r.run}: POST cost with key (server CPU per request with / without)`, r.verdicts.idempotencyServerCpu));
    console.log(verdictText(`run ${r.run}: GET by id req/s, rate limiting on / off`, r.verdicts.rateLimitRequestsPerSecond));
    console.log(`run ${r.run}: GET by id mean latency, rate limiting on / off: ${fmt(r.rateLimitMeanLatency, 2)}x`);
  }
  const overall = {
    idempotencyRequestsPerSecond: verdict(median(runs.map((r) => r.verdicts.idempotencyRequestsPerSecond.ratio)), TARGETS.idempotencyCost, true),
    idempotencyServerCpu: verdict(median(runs.map((r) => r.verdicts.idempotencyServerCpu.ratio)), TARGETS.idempotencyCost, true),
    rateLimitRequestsPerSecond: verdict(median(runs.map((r) => r.verdicts.rateLimitRequestsPerSecond.ratio)), TARGETS.rateLimitShare),
  };
  console.log(verdictText(`median of ${REPEATS}: POST cost with key (req/s without / with)`, overall.idempotencyRequestsPerSecond));
  console.log(verdictText(`median of ${REPEATS}: POST cost with key (server CPU per request with / without)`, overall.idempotencyServerCpu));
  console.log(verdictText(`median of ${REPEATS}: GET by id req/s, rate limiting on / off`, overall.rateLimitRequestsPerSecond));
  warnAboutCpu(rows);

  writeResults(RESULTS_FILE, {
    ...resultsHeader('limits', source, pinning, {
      repeats: REPEATS,
      order:
        'per repeat: POST pair, then GET pair; each configuration its own Canon process on a fresh SQLite file, both running; the pair measured in alternating slices (A B B A …, BENCH_SLICES per configuration of BENCH_SLICE_SECONDS each); which leads is reversed on even repeats',
      canonRateLimit: 'on (limits 1000000000/1, in-memory counters) except the "rate limiting off" runs (CANON_RATE_LIMIT=off)',
    }),
    runs,
    overall,
    targets: TARGETS,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
