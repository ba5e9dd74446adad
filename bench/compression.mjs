#!/usr/bin/env node
// Benchmark (issue 31.5): what compressing responses per Accept-Encoding costs per request kind, the bytes it saves, and that the uncompressed path is as fast as before.
//
//   node scripts/build.mjs && node bench/compression.mjs
//
// (1) One `canon serve` on SQLite with BENCH_PRODUCTS products (default 3,000: more pages than the list cache keeps) (and one with a 2 KB description). For each kind of
//     request: GET by id (a ~0.5 KB product: below the 1 KiB threshold, so only negotiation is paid), GET by id of the
//     2 KB product, the same 20-item page again and again (its rendering and compressed bytes are kept), and 20-item
//     pages at random offsets (rendered and compressed per request, as no cache answers): identity against gzip, then
//     identity against br, in alternating slices (bench/lib/interleave.mjs), with requests/s, server CPU µs per request
//     and the bytes of one response.
// (2) Identity only (no Accept-Encoding), this build against the build at BENCH_BASE_ROOT (a worktree of main before
//     compression, built with `node scripts/build.mjs`), each on its own SQLite file with the same products: GET by id
//     and the fixed page. Skipped when that build is missing (the command to make it is printed).
// BENCH_KINDS=randomPage,… measures only those kinds in (1). Results go to bench/results/compression.json. BENCH_SLICES / BENCH_SLICE_SECONDS shorten or lengthen the run.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createProducts, startCanon } from './lib/canon.mjs';
import { setUpPinning } from './lib/cpu.mjs';
import { measureInterleaved } from './lib/interleave.mjs';
import { RESULTS_DIR, ROOT, fmt, intFromEnv } from './lib/options.mjs';
import { freePort, makeTempDir, request, runMain, stopServer, waitUntilReady } from './lib/processes.mjs';
import { headline, printTable, problemsOf, resultsHeader, sourceProblems, sourceVersion, warnAboutCpu, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'compression.json');
const ADMIN_KEY = 'ck_bench_compression_0123456789abcdef';
const HEADERS = { 'x-api-key': ADMIN_KEY };
const PRODUCTS = intFromEnv('BENCH_PRODUCTS', 3000, 50, 100_000);
const BASE_ROOT = path.resolve(process.env.BENCH_BASE_ROOT ?? '/tmp/canon-compress-base');
const BASE_CLI = path.join(BASE_ROOT, 'dist/src/cli/main.js');
/** BENCH_KINDS=byId,page: only those kinds in part (1) (byId, byIdLong, page, randomPage). */
const ONLY = process.env.BENCH_KINDS?.split(',');
const LONG = 'Single-origin beans, roasted dark for espresso; notes of cocoa and dried fruit. '.repeat(26);

let pinning;

async function serve(name, cli) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const databaseUrl = `sqlite:${path.join(makeTempDir('canon-bench-compression-'), 'canon.db')}`;
  const server = startCanon(port, { databaseUrl, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: name, name, env: { CANON_WORKER: 'off' }, ...(cli ? { cli } : {}) });
  await waitUntilReady(server, base);
  const ids = await createProducts(base, HEADERS, PRODUCTS, { label: name });
  const long = await request('POST', `${base}/v2/products`, { headers: HEADERS, body: { name: 'Long', description: LONG, price: { amount: 990, currency: 'EUR' } } });
  if (long.status !== 201) throw new Error(`POST /v2/products answered ${long.status}: ${long.body.slice(0, 300)}`);
  return { server, base, id: ids[Math.floor(ids.length / 2)], longId: JSON.parse(long.body).id };
}

/** The kinds of request measured: a fixed path, or a path drawn per request. */
function kinds(s) {
  const offsets = Math.max(1, PRODUCTS - 20);
  return [
    { key: 'byId', label: 'GET by id (0.5 KB)', path: `/v2/products/${s.id}` },
    { key: 'byIdLong', label: 'GET by id (2 KB)', path: `/v2/products/${s.longId}` },
    { key: 'page', label: '20-item page, same URL', path: '/v2/products?limit=20' },
    {
      key: 'randomPage',
      label: '20-item page, random offset',
      path: '/v2/products?limit=20&offset=0',
      requests: [{ setupRequest: (req) => ({ ...req, path: `/v2/products?limit=20&offset=${Math.floor(Math.random() * offsets)}` }) }],
    },
  ];
}

function load(base, kind, acceptEncoding) {
  return {
    url: `${base}${kind.path}`,
    headers: acceptEncoding ? { ...HEADERS, 'accept-encoding': acceptEncoding } : HEADERS,
    ...(kind.requests ? { requests: kind.requests } : {}),
  };
}

/**
 * CPU µs to compress one response of `kind` in this process, with the server's own code and settings
 * (dist/src/http/rendering/compression.js, no memo): what a request coded per request pays, apart from the load.
 */
async function compressCost(base, kind) {
  const { Compression } = await import(pathToFileURL(path.join(ROOT, 'dist/src/http/rendering/compression.js')).href);
  const compression = new Compression(true, 0);
  const res = await request('GET', `${base}${kind.path}`, { headers: HEADERS, timeoutMs: 5000 });
  const out = {};
  for (const coding of ['gzip', 'br']) {
    for (let i = 0; i < 50; i++) compression.encode(res.body, coding);
    const n = 500;
    const before = process.cpuUsage();
    for (let i = 0; i < n; i++) compression.encode(res.body, coding);
    const used = process.cpuUsage(before);
    out[coding] = (used.user + used.system) / n;
  }
  return out;
}

/** One response of `kind` in `coding`: the bytes sent (Content-Length) and the coding the server chose. */
async function sample(base, kind, acceptEncoding) {
  const res = await request('GET', `${base}${kind.path}`, { headers: acceptEncoding ? { ...HEADERS, 'accept-encoding': acceptEncoding } : HEADERS, timeoutMs: 5000 });
  if (res.status !== 200) throw new Error(`GET ${kind.path} answered ${res.status}`);
  return { bytes: Number(res.headers['content-length']), coding: res.headers['content-encoding'] ?? 'identity' };
}

async function pair(a, b) {
  const [ra, rb] = await measureInterleaved([a, b]);
  return { a: ra, b: rb, ratio: ra.requestsPerSecond.average / rb.requestsPerSecond.average };
}

async function main() {
  pinning = setUpPinning();
  headline(`compression (${fmt(PRODUCTS)} products)`, pinning);
  const rows = [];
  const codings = {};
  const now = await serve('canon-compression');
  try {
    for (const kind of kinds(now).filter((k) => ONLY === undefined || ONLY.includes(k.key))) {
      const sizes = {};
      for (const [name, ae] of [
        ['identity', undefined],
        ['gzip', 'gzip'],
        ['br', 'br'],
      ])
        sizes[name] = await sample(now.base, kind, ae);
      const out = { sizes, compressMicros: await compressCost(now.base, kind) };
      for (const coding of ['gzip', 'br']) {
        out[coding] = await pair(
          { server: now.server, load: load(now.base, kind, undefined), label: `${kind.label}, identity`, name: `${kind.key}-identity` },
          { server: now.server, load: load(now.base, kind, coding), label: `${kind.label}, ${coding}`, name: `${kind.key}-${coding}` },
        );
        rows.push(out[coding].a, out[coding].b);
      }
      codings[kind.key] = out;
    }
  } finally {
    await stopServer(now.server);
  }
  let baseline;
  if (existsSync(BASE_CLI)) {
    const fresh = await serve('canon-compression-identity');
    const before = await serve('canon-compression-base', BASE_CLI);
    try {
      baseline = {};
      for (const kind of kinds(fresh).slice(0, 3)) {
        const other = kinds(before).find((k) => k.key === kind.key);
        baseline[kind.key] = await pair(
          { server: fresh.server, load: load(fresh.base, kind, undefined), label: `${kind.label}, identity, this build`, name: `${kind.key}-now` },
          { server: before.server, load: load(before.base, other, undefined), label: `${kind.label}, identity, before`, name: `${kind.key}-base` },
        );
        rows.push(baseline[kind.key].a, baseline[kind.key].b);
      }
    } finally {
      await stopServer(before.server);
      await stopServer(fresh.server);
    }
  } else {
    console.log(
      `bench: ${BASE_CLI} is missing, so part (2) is skipped: git worktree add -f ${BASE_ROOT} <commit before compression> && ln -s $PWD/node_modules ${BASE_ROOT}/node_modules && (cd ${BASE_ROOT} && node scripts/build.mjs)`,
    );
  }
  console.log('');
  printTable(rows, { first: 'measured' });
  console.log('');
  console.log(
    'kind | bytes identity → gzip / br | CPU µs/req identity, gzip (extra) | identity, br (extra) | req/s coded/identity gzip, br | µs to compress one, in process: gzip, br',
  );
  for (const [key, o] of Object.entries(codings)) {
    const us = (r) => r.serverCpuMicrosPerRequest;
    console.log(
      `${key} | ${fmt(o.sizes.identity.bytes)} → ${fmt(o.sizes.gzip.bytes)} (${o.sizes.gzip.coding}) / ${fmt(o.sizes.br.bytes)} (${o.sizes.br.coding}) | ` +
        `${fmt(us(o.gzip.a), 1)}, ${fmt(us(o.gzip.b), 1)} (+${fmt(us(o.gzip.b) - us(o.gzip.a), 1)}) | ${fmt(us(o.br.a), 1)}, ${fmt(us(o.br.b), 1)} (+${fmt(us(o.br.b) - us(o.br.a), 1)}) | ` +
        `${fmt(1 / o.gzip.ratio, 3)}, ${fmt(1 / o.br.ratio, 3)} | ${fmt(o.compressMicros.gzip, 1)}, ${fmt(o.compressMicros.br, 1)}`,
    );
  }
  if (baseline)
    for (const [key, p] of Object.entries(baseline))
      console.log(`${key}, identity: this build / before = ${fmt(p.ratio, 3)}x req/s, ${fmt(p.a.serverCpuMicrosPerRequest, 1)} vs ${fmt(p.b.serverCpuMicrosPerRequest, 1)} µs/req`);
  warnAboutCpu(rows);
  const source = sourceVersion();
  const problems = sourceProblems(source).concat(rows.flatMap((r) => problemsOf(r, 200)));
  writeResults(RESULTS_FILE, {
    ...resultsHeader('compression', source, pinning, { products: PRODUCTS, baseline: existsSync(BASE_CLI) ? BASE_CLI : null }),
    codings,
    baseline: baseline ?? null,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
