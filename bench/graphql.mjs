#!/usr/bin/env node
// Benchmark (issue 29): GraphQL against REST on one Canon server, for the same objects and fields, in one run.
//
//   npm run build && node bench/graphql.mjs
//
// One `canon serve` on SQLite with BENCH_PRODUCTS products. Each pair is measured in alternating slices
// (bench/lib/interleave.mjs), both loaded by wrk (bench/lib/wrk.mjs) with the same connections:
// (1) POST /graphql `product(id:)` selecting every field REST shows, against GET /v2/products/{id};
// (2) POST /graphql `products(first: 20)` (edges with cursors, every field, pageInfo), against GET /v2/products?limit=20.
// Targets: each GraphQL rate >= 0.8x the REST rate. Before measuring, each pair is checked: the same ids, names and
// prices in the same order from both. BENCH_REPEATS (default 3); verdicts on the medians. Results go to
// bench/results/graphql.json. The batched 20-orders query against Platformatic DB: bench/graphql-platformatic.mjs.
import path from 'node:path';
import { createProducts, reportProfile, startCanon } from './lib/canon.mjs';
import { setUpPinning } from './lib/cpu.mjs';
import { measureInterleaved } from './lib/interleave.mjs';
import { assertWrk } from './lib/wrk.mjs';
import { RESULTS_DIR, fmt, intFromEnv } from './lib/options.mjs';
import { freePort, getJson, makeTempDir, request, runMain, stopServer, waitUntilReady } from './lib/processes.mjs';
import { headline, median, printTable, problemsOf, resultsHeader, sourceProblems, sourceVersion, warnAboutCpu, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'graphql.json');
const ADMIN_KEY = 'ck_bench_graphql_0123456789abcdefgh';
const HEADERS = { 'x-api-key': ADMIN_KEY };
const PRODUCTS = intFromEnv('BENCH_PRODUCTS', 500, 50, 100_000);
const REPEATS = intFromEnv('BENCH_REPEATS', 3, 1, 10);
const TARGET = 0.8;

/** Every field GET /v2/products/{id} shows, in GraphQL's names (links aside: GraphQL has none). */
const PRODUCT_FIELDS = 'id name description price { amount currency } status tags createdAt updatedAt';

let pinning;

function graphqlLoad(base, query) {
  return {
    engine: 'wrk',
    url: `${base}/graphql`,
    method: 'POST',
    body: JSON.stringify({ query }),
    headers: { ...HEADERS, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
  };
}

async function graphql(base, query) {
  const res = await request('POST', `${base}/graphql`, { headers: { ...HEADERS, 'content-type': 'application/json' }, body: { query }, timeoutMs: 10_000 });
  const body = JSON.parse(res.body);
  if (res.status !== 200 || body.errors) throw new Error(`POST /graphql answered ${res.status}: ${res.body.slice(0, 300)}`);
  return body.data;
}

/** The same objects both ways: ids, names and prices in the same order. */
function assertSame(what, rest, gql) {
  const pick = (p) => `${p.id} ${p.name} ${p.price.amount} ${p.price.currency}`;
  const a = rest.map(pick).join('\n');
  const b = gql.map(pick).join('\n');
  if (a !== b || rest.length === 0) throw new Error(`${what}: REST and GraphQL disagree:\n${a}\n---\n${b}`);
}

async function pair(a, b) {
  const [ra, rb] = await measureInterleaved([a, b]);
  return { a: ra, b: rb, ratio: ra.requestsPerSecond.average / rb.requestsPerSecond.average };
}

async function repeat(run) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const databaseUrl = `sqlite:${path.join(makeTempDir('canon-bench-graphql-'), 'canon.db')}`;
  const name = `canon-graphql-${run}`;
  const server = startCanon(port, { databaseUrl, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: name, name, env: { CANON_WORKER: 'off' } });
  const out = {};
  try {
    await waitUntilReady(server, base);
    const ids = await createProducts(base, HEADERS, PRODUCTS, { label: name });
    const id = ids[Math.floor(ids.length / 2)];
    const oneQuery = `{ product(id: "${id}") { ${PRODUCT_FIELDS} } }`;
    const pageQuery = `{ products(first: 20) { edges { cursor node { ${PRODUCT_FIELDS} } } pageInfo { hasNextPage endCursor } } }`;
    const restOne = await getJson(`${base}/v2/products/${id}`, HEADERS);
    assertSame('one product', [restOne.json], [(await graphql(base, oneQuery)).product]);
    const restPage = await getJson(`${base}/v2/products?limit=20`, HEADERS);
    assertSame(
      'a 20-item page',
      restPage.json.data,
      (await graphql(base, pageQuery)).products.edges.map((e) => e.node),
    );
    out.one = await pair(
      { server, load: graphqlLoad(base, oneQuery), label: `run ${run}: POST /graphql product(id:)`, name: `gql-one-${run}` },
      { server, load: { engine: 'wrk', url: `${base}/v2/products/${id}`, headers: HEADERS }, label: `run ${run}: GET /v2/products/{id}`, name: `rest-one-${run}` },
    );
    out.page = await pair(
      { server, load: graphqlLoad(base, pageQuery), label: `run ${run}: POST /graphql products(first: 20)`, name: `gql-page-${run}` },
      { server, load: { engine: 'wrk', url: `${base}/v2/products?limit=20`, headers: HEADERS }, label: `run ${run}: GET /v2/products?limit=20`, name: `rest-page-${run}` },
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
  headline(`graphql against REST (${fmt(PRODUCTS)} products, ${REPEATS} repeats)`, pinning);
  const runs = [];
  for (let r = 1; r <= REPEATS; r++) runs.push(await repeat(r));
  const rows = runs.flatMap((o) => Object.values(o).flatMap((p) => [p.a, p.b]));
  console.log('');
  printTable(rows, { first: 'measured' });
  console.log('');
  const verdicts = {};
  for (const [key, what] of [
    ['one', 'one product'],
    ['page', 'a 20-item page'],
  ]) {
    const value = median(runs.map((o) => o[key].ratio));
    const cpu = median(runs.map((o) => o[key].b.serverCpuMicrosPerRequest / o[key].a.serverCpuMicrosPerRequest));
    verdicts[key] = { value, target: TARGET, met: value >= TARGET, cpuRatio: cpu };
    console.log(
      `GraphQL / REST, ${what}: ${fmt(value, 3)}x (server CPU per request, REST / GraphQL: ${fmt(cpu, 3)}x; target >= ${TARGET}x: ${value >= TARGET ? 'MET' : 'NOT MET'})`,
    );
  }
  warnAboutCpu(rows);
  const source = sourceVersion();
  const problems = sourceProblems(source).concat(runs.flatMap((o) => Object.values(o).flatMap((p) => [...problemsOf(p.a, 200), ...problemsOf(p.b, 200)])));
  writeResults(RESULTS_FILE, {
    ...resultsHeader('graphql', source, pinning, { products: PRODUCTS, repeats: REPEATS }),
    results: runs,
    verdicts,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length) console.log(`bench: the run is not valid:\n- ${problems.join('\n- ')}`);
}

runMain(main);
