#!/usr/bin/env node
// Benchmark (issue 15): a page of GET /events against a page of products on the same server (SQLite, PostgreSQL), and POST throughput with events and webhook deliveries on, against the same writes before issue 15.
//
//   npm run build && node bench/events.mjs
//
// (1) `GET /events?after=<id>&limit=100` vs `GET /v2/products?limit=100`, both 100 items, on one canon serve
//     (CANON_WORKER=off) holding BENCH_PRODUCTS products created by HTTP (so as many events), loaded in alternating
//     slices (bench/lib/interleave.mjs); on SQLite and on PostgreSQL (a scratch database, dropped at the end).
// (2) `POST /v2/products` (a distinct body each time) against this checkout with a webhook endpoint matching
//     product.* registered and the embedded worker delivering to a local HTTPS receiver (bench/lib/receiver.mjs),
//     and against the build at BENCH_BASE_ROOT (default /tmp/canon-base: a worktree of a375d16, the commit before
//     issue 15, built with npx tsc), each on a fresh SQLite file, side by side in alternating slices. After each of
//     this checkout's slices the script waits until every event written so far was delivered (/metrics), and that
//     wait counts in its slice: the figure is what the process sustains with its deliveries done.
//     BENCH_REPEATS pairs of each (default 1, about 3 minutes in all; 2 or more for a verdict), the leader
//     alternating; verdict on the median ratio. With BENCH_PARTS=list,writes,worker-off (the default) the pair is
//     also run with CANON_WORKER=off: events written, deliveries left to another process, what the request path
//     alone pays.
// Results go to bench/results/events.json.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createProducts, registerEndpoint, reportProfile, startCanon } from './lib/canon.mjs';
import { setUpPinning } from './lib/cpu.mjs';
import { measureInterleaved } from './lib/interleave.mjs';
import { RESULTS_DIR, fmt, intFromEnv } from './lib/options.mjs';
import { createDatabase } from './lib/pg.mjs';
import { freePort, getJson, get, makeTempDir, request, runMain, stopServer, waitUntilReady } from './lib/processes.mjs';
import { makeCertificates, startReceiver } from './lib/receiver.mjs';
import { headline, median, printTable, problemsOf, resultsHeader, sourceProblems, sourceVersion, warnAboutCpu, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'events.json');
const ADMIN_KEY = 'ck_bench_events_0123456789abcdef0';
const HEADERS = { 'x-api-key': ADMIN_KEY };
const PRODUCTS = intFromEnv('BENCH_PRODUCTS', 1_000, 200, 100_000);
const REPEATS = intFromEnv('BENCH_REPEATS', 1, 1, 10);
const BASE_ROOT = path.resolve(process.env.BENCH_BASE_ROOT ?? '/tmp/canon-base');
const BASE_CLI = path.join(BASE_ROOT, 'dist/src/cli/main.js');
const PARTS = (process.env.BENCH_PARTS ?? 'list,writes,worker-off').split(',');
const TARGETS = { eventsOverProducts: 0.8, writeShare: 0.95 };

let pinning;

async function serve(databaseUrl, name, { env = {}, cli } = {}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = startCanon(port, { databaseUrl, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: name, name, env, ...(cli ? { cli } : {}) });
  await waitUntilReady(server, base);
  return { server, base };
}

/** The two lists on one server, in alternating slices; returns both results and their ratio. */
async function listPair(label, databaseUrl) {
  const { server, base } = await serve(databaseUrl, `canon-events-list-${label}`, { env: { CANON_WORKER: 'off' } });
  try {
    await createProducts(base, HEADERS, PRODUCTS, { label: 'list' });
    // On PostgreSQL events become readable once stamped, just after their commits.
    let first;
    for (let i = 0; i < 100; i++) {
      first = (await getJson(`${base}/events?limit=100`, HEADERS)).json;
      if (first.data.length === 100) break;
      await sleep(50);
    }
    const after = first.data[0].id;
    const eventsPath = `/events?after=${after}&limit=100`;
    const productsPath = '/v2/products?limit=100';
    const events = (await getJson(`${base}${eventsPath}`, HEADERS)).res;
    const products = (await getJson(`${base}${productsPath}`, HEADERS)).res;
    const counts = [JSON.parse(events.body).data.length, JSON.parse(products.body).data.length];
    if (counts[0] !== 100 || counts[1] !== 100) throw new Error(`expected 100 items in each page, got ${counts.join(' and ')}`);
    console.log(`bench: ${label}: ${PRODUCTS} products and events; an events page is ${fmt(events.body.length)} bytes, a products page ${fmt(products.body.length)} bytes`);
    const [e, p] = await measureInterleaved([
      { server, load: { url: `${base}${eventsPath}`, headers: HEADERS }, label: `${label}: GET ${eventsPath.replace(after, '<id>')}`, name: `events-${label}` },
      { server, load: { url: `${base}${productsPath}`, headers: HEADERS }, label: `${label}: GET ${productsPath}`, name: `products-${label}` },
    ]);
    return { events: e, products: p, ratio: e.requestsPerSecond.average / p.requestsPerSecond.average, bytes: { events: events.body.length, products: products.body.length } };
  } finally {
    await stopServer(server);
    reportProfile(`canon-events-list-${label}`);
  }
}

let bodies = 0;
function nextBody() {
  bodies++;
  return JSON.stringify({ name: `Event bench product ${bodies}`, price: { amount: 100 + (bodies % 100_000), currency: 'EUR' }, status: 'active', tags: [] });
}
const postLoad = (base) => ({
  url: base,
  headers: HEADERS,
  requests: [{ method: 'POST', path: '/v2/products', setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'content-type': 'application/json' }, body: nextBody() }) }],
});

/** The counters of one /metrics scrape, by full sample name (labels included). */
async function metrics(base) {
  const res = await get(`${base}/metrics`, HEADERS, 5000);
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  const out = {};
  for (const line of res.body.split('\n')) {
    const m = /^([a-z_]+(?:\{[^}]*\})?) ([0-9.e+]+)$/.exec(line);
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

/** Waits until every event this process wrote after the first `before` was delivered (succeeded). */
async function drained(base, before, deadlineMs = 60_000) {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const m = await metrics(base);
    const written = (m.canon_events_written_total ?? 0) - before;
    const delivered = m['canon_webhook_deliveries_total{result="succeeded"}'] ?? 0;
    if (delivered >= written) return;
    if (Date.now() > until) throw new Error(`only ${delivered} of ${written} events were delivered within ${deadlineMs / 1000} s`);
    await sleep(10);
  }
}

/**
 * One repeat: this checkout vs the build before issue 15, side by side, alternating slices. `worker`: 'embedded'
 * (this process delivers; each of its slices includes the wait for its deliveries) or 'off' (the endpoint is
 * registered but deliveries are left to a worker elsewhere: what the request path alone pays for events).
 */
async function writePair(run, receiver, certs, leader, worker) {
  const dirs = [makeTempDir('canon-bench-events-'), makeTempDir('canon-bench-events-')];
  const delivering = worker === 'embedded';
  const now = await serve(`sqlite:${path.join(dirs[0], 'canon.db')}`, `canon-events-writes-${worker}-${run}`, {
    env: { CANON_WORKER: worker, NODE_EXTRA_CA_CERTS: certs.caFile, CANON_WEBHOOK_ALLOW_PRIVATE: '1' },
  });
  const old = await serve(`sqlite:${path.join(dirs[1], 'canon.db')}`, `canon-a375d16-writes-${run}`, { cli: BASE_CLI });
  try {
    const hook = `/hooks/events-${run}`;
    const { secret } = await registerEndpoint(now.base, HEADERS, receiver.url(hook), ['product.*']);
    // Events written before the endpoint existed (the admin key's) are nobody's deliveries.
    const earlier = (await metrics(now.base)).canon_events_written_total ?? 0;
    const route = receiver.route(hook, secret);
    for (const base of [now.base, old.base]) {
      const res = await request('POST', `${base}/v2/products`, { headers: HEADERS, body: nextBody(), timeoutMs: 5000 });
      if (res.status !== 201) throw new Error(`POST /v2/products answered ${res.status}: ${res.body.slice(0, 300)}`);
    }
    if (delivering) {
      await drained(now.base, earlier);
      if (route.unique < 1) throw new Error('the receiver got no delivery');
    }
    const targets = [
      {
        server: now.server,
        load: postLoad(now.base),
        label: `run ${run}: POST, ${delivering ? 'events and deliveries (embedded worker)' : 'events, endpoint registered, CANON_WORKER=off'}`,
        name: `now-${worker}-${run}`,
        ...(delivering ? { afterSlice: () => drained(now.base, earlier) } : {}),
      },
      { server: old.server, load: postLoad(old.base), label: `run ${run}: POST at a375d16 (before issue 15)`, name: `a375d16-${worker}-${run}` },
    ];
    const [a, b] = await measureInterleaved(leader === 'now' ? targets : [targets[1], targets[0]]);
    const [withDeliveries, baseline] = leader === 'now' ? [a, b] : [b, a];
    const metricsAfter = await metrics(now.base);
    return {
      worker,
      withDeliveries,
      baseline,
      share: withDeliveries.requestsPerSecond.average / baseline.requestsPerSecond.average,
      requestPathShare: withDeliveries.totalRequests / (withDeliveries.durationSeconds - withDeliveries.afterSliceSeconds) / baseline.requestsPerSecond.average,
      deliveredDuringRun: route.unique,
      duplicates: route.attempts - route.unique,
      eventsWritten: metricsAfter.canon_events_written_total - earlier,
    };
  } finally {
    await stopServer(now.server);
    await stopServer(old.server);
    reportProfile(`canon-events-writes-${worker}-${run}`);
  }
}

async function main() {
  pinning = setUpPinning();
  headline(`events (${fmt(PRODUCTS)} products per list run, ${REPEATS} write repeats)`, pinning);
  const results = {};
  if (PARTS.includes('list')) {
    const dir = makeTempDir('canon-bench-events-list-');
    results.listSqlite = await listPair('SQLite', `sqlite:${path.join(dir, 'canon.db')}`);
    const db = await createDatabase();
    results.listPostgres = await listPair('PostgreSQL', db.url);
  }
  if (PARTS.includes('writes') || PARTS.includes('worker-off')) {
    if (!existsSync(BASE_CLI)) {
      throw new Error(
        `${BASE_CLI} is missing: make the baseline first: git worktree add -f ${BASE_ROOT} a375d16 && ln -s $PWD/node_modules ${BASE_ROOT}/node_modules && (cd ${BASE_ROOT} && npx tsc -p tsconfig.json)`,
      );
    }
    const certs = makeCertificates();
    const receiver = await startReceiver(certs);
    results.writes = [];
    results.writesWorkerOff = [];
    for (let r = 1; r <= REPEATS; r++) {
      const leader = r % 2 === 1 ? 'now' : 'before';
      if (PARTS.includes('writes')) results.writes.push(await writePair(r, receiver, certs, leader, 'embedded'));
      if (PARTS.includes('worker-off')) results.writesWorkerOff.push(await writePair(r, receiver, certs, leader, 'off'));
    }
    results.receiverProblems = receiver.problems;
  }

  const verdicts = {};
  const rows = [];
  console.log('');
  for (const key of ['listSqlite', 'listPostgres']) {
    const l = results[key];
    if (!l) continue;
    rows.push(l.events, l.products);
    verdicts[key] = { value: l.ratio, target: TARGETS.eventsOverProducts, met: l.ratio >= TARGETS.eventsOverProducts };
  }
  for (const w of [...(results.writes ?? []), ...(results.writesWorkerOff ?? [])]) rows.push(w.withDeliveries, w.baseline);
  if (rows.length) printTable(rows, { first: 'measured' });
  console.log('');
  for (const key of ['listSqlite', 'listPostgres']) {
    const l = results[key];
    if (l)
      console.log(
        `${key === 'listSqlite' ? 'SQLite' : 'PostgreSQL'}: events page / products page req/s ${fmt(l.ratio, 2)}x (target >= ${TARGETS.eventsOverProducts}x: ${verdicts[key].met ? 'MET' : 'NOT MET'})`,
      );
  }
  if (results.writes?.length) {
    const shares = results.writes.map((w) => w.share);
    verdicts.writes = { value: median(shares), target: TARGETS.writeShare, met: median(shares) >= TARGETS.writeShare };
    for (const [i, w] of results.writes.entries()) {
      console.log(
        `run ${i + 1}: POST with deliveries / at a375d16 ${fmt(w.share, 3)}x (the request path alone, deliveries lagging: ${fmt(w.requestPathShare, 3)}x); ` +
          `${fmt(w.eventsWritten)} events, ${fmt(w.deliveredDuringRun)} delivered, waits for deliveries ${fmt(w.withDeliveries.afterSliceSeconds, 2)} s of ${fmt(w.withDeliveries.durationSeconds, 2)} s`,
      );
    }
    console.log(`median: ${fmt(verdicts.writes.value, 3)}x (target >= ${TARGETS.writeShare}x, at most 5 % lost: ${verdicts.writes.met ? 'MET' : 'NOT MET'})`);
  }
  if (results.writesWorkerOff?.length) {
    const shares = results.writesWorkerOff.map((w) => w.share);
    verdicts.writesWorkerOff = { value: median(shares), target: TARGETS.writeShare, met: median(shares) >= TARGETS.writeShare };
    console.log(
      `CANON_WORKER=off (events written, deliveries left to another process): ${shares.map((x) => fmt(x, 3)).join(', ')}, median ${fmt(verdicts.writesWorkerOff.value, 3)}x ` +
        `(target >= ${TARGETS.writeShare}x: ${verdicts.writesWorkerOff.met ? 'MET' : 'NOT MET'})`,
    );
  }
  warnAboutCpu(rows);
  const source = sourceVersion();
  const problems = sourceProblems(source).concat(
    rows.flatMap((r) => problemsOf(r, r.label.includes('POST') ? 201 : 200)),
    results.receiverProblems ?? [],
  );
  writeResults(RESULTS_FILE, {
    ...resultsHeader('events', source, pinning, {
      products: PRODUCTS,
      repeats: REPEATS,
      baseline: `${BASE_CLI} (a375d16, the commit before issue 15)`,
      writes: 'this checkout: CANON_WORKER=embedded, one endpoint for product.*, receiver in the benchmark process; each slice of it includes the wait for its deliveries',
    }),
    results,
    verdicts,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
