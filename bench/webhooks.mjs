#!/usr/bin/env node
// Benchmark (issue 15): signed webhook deliveries per second to a local HTTPS receiver (SQLite embedded, one and two PostgreSQL workers) and commit → first attempt latency.
//
//   npm run build && node bench/webhooks.mjs
//
// The receiver runs in this process (pinned to the client core) with a CA and certificate made by the openssl
// CLI; Canon processes trust the CA through NODE_EXTRA_CA_CERTS and run with CANON_WEBHOOK_ALLOW_PRIVATE=1.
// It answers 200 at once and verifies every delivery with the official standardwebhooks library.
//
// Throughput: BENCH_EVENTS products (default 5,000) are created by HTTP while no worker runs, then the
// worker(s) start and the time from the first delivery to the last is measured:
//   (a) `canon serve` on SQLite with the embedded worker;
//   (b) one `canon worker` on PostgreSQL; (c) two `canon worker` processes on the same database;
//   and (b), (c) again with a receiver answering after BENCH_SLOW_RECEIVER_MS (default 50; part `pg-slow`).
// Workers run on the server core (both of (c) too, unless BENCH_WORKER_CORES=spread: the second on the client
// core); PostgreSQL is not pinned. BENCH_REPEATS (default 3) repeats of each, medians reported.
// Latency: one product at a time, BENCH_LATENCY_RATE per second (default 20, jittered) for BENCH_LATENCY_SECONDS
// (default 12), commit (the POST's answer) → the receiver's arrival, for: PostgreSQL API process + worker process
// with Redis, the same without Redis (NOTIFY and polling), and SQLite with the embedded worker.
// Results go to bench/results/webhooks.json.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createProducts, registerEndpoint, reportProfile, startCanon, startCanonWorker } from './lib/canon.mjs';
import { cpuSecondsBetween, cpuSecondsByName, cpuSecondsOf, selfCpuSeconds, setUpPinning } from './lib/cpu.mjs';
import { LatencyHistogram } from './lib/load.mjs';
import { CLIENT_CORE, RESULTS_DIR, fmt, intFromEnv } from './lib/options.mjs';
import { createDatabase, redisPrefix } from './lib/pg.mjs';
import { freePort, makeTempDir, request, runMain, stopServer, waitUntilReady } from './lib/processes.mjs';
import { makeCertificates, startReceiver } from './lib/receiver.mjs';
import { headline, median, resultsHeader, sourceProblems, sourceVersion, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'webhooks.json');
const ADMIN_KEY = 'ck_bench_webhooks_0123456789abcdef';
const HEADERS = { 'x-api-key': ADMIN_KEY };
const EVENTS = intFromEnv('BENCH_EVENTS', 5_000, 100, 1_000_000);
const REPEATS = intFromEnv('BENCH_REPEATS', 3, 1, 20);
const LATENCY_RATE = intFromEnv('BENCH_LATENCY_RATE', 20, 1, 500);
const LATENCY_SECONDS = intFromEnv('BENCH_LATENCY_SECONDS', 12, 1, 600);
const DELIVERY_TIMEOUT_MS = intFromEnv('BENCH_DELIVERY_TIMEOUT', 120, 5, 3600) * 1000;
const SPREAD = process.env.BENCH_WORKER_CORES === 'spread';
const SLOW_RECEIVER_MS = intFromEnv('BENCH_SLOW_RECEIVER_MS', 50, 1, 10_000);
const PARTS = (process.env.BENCH_PARTS ?? 'sqlite,pg,pg-slow,latency').split(',');
const TARGETS = { sqlite: 1_500, perWorker: 2_000, twoOverOne: 1.7, p99Redis: 50, p99Polling: 250 };
const POSTGRES_CPU = () => cpuSecondsByName('postgres');

let certs;
let receiver;
let pinning;
/** What every Canon process of this benchmark needs to deliver to the receiver. */
let webhookEnv;

/** Starts `canon serve` on `databaseUrl` and waits for it; `worker`: 'embedded' or 'off'. `track` sees the process as soon as it is spawned. */
async function serve(databaseUrl, worker, { name = 'canon', env = {}, track } = {}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = startCanon(port, { databaseUrl, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: name, name, env: { ...webhookEnv, CANON_WORKER: worker, ...env } });
  track?.(server);
  await waitUntilReady(server, base);
  return { server, base };
}

/** Resolves when `route` has `count` distinct deliveries (or rejects after the timeout); `onFirst` runs at the first. */
function deliveriesDone(route, count, onFirst) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${route.unique} of ${count} deliveries arrived within ${DELIVERY_TIMEOUT_MS / 1000} s`)), DELIVERY_TIMEOUT_MS);
    route.times = [];
    route.onDelivery = (d) => {
      if (!d.duplicate) route.times.push(d.at);
      if (route.unique === 1 && route.attempts === 1) onFirst?.();
      if (route.unique >= count) {
        clearTimeout(timer);
        route.onDelivery = undefined;
        resolve();
      }
    };
  });
}

/** A fresh receiver path for an endpoint registered on `base`, answering after `delayMs`. */
async function endpoint(base, label, delayMs = 0) {
  const p = `/hooks/${label}-${Math.random().toString(36).slice(2)}`;
  const { id, secret } = await registerEndpoint(base, HEADERS, receiver.url(p), ['product.*']);
  return { id, route: receiver.route(p, secret, undefined, delayMs) };
}

/** Waits until one product created on `api` reaches `route`: the worker is running and its dispatch position exists. */
async function primed(api, route) {
  const before = route.unique;
  await createProducts(api, HEADERS, 1, { width: 1, label: 'prime' });
  const deadline = Date.now() + 30_000;
  while (route.unique <= before) {
    if (Date.now() > deadline) throw new Error('the priming delivery did not arrive within 30 s');
    await sleep(20);
  }
}

/**
 * Measures the backlog drain: `start()` starts the delivering process(es) (returning their servers) with `EVENTS`
 * deliveries waiting; the window runs from the first delivery's arrival to the last's.
 */
async function drain(label, route, start) {
  route.attempts = 0;
  route.unique = 0;
  route.ids.clear();
  route.first = route.last = undefined;
  const cpu = {};
  // Filled as each process is spawned (before it is ready: an embedded worker delivers before /healthz answers).
  const servers = [];
  const sample = () => ({ servers: servers.map((s) => cpuSecondsOf(s.child.pid)), pg: POSTGRES_CPU(), self: selfCpuSeconds(), at: performance.now() });
  const done = deliveriesDone(route, EVENTS, () => (cpu.first = sample()));
  const startedAt = performance.now();
  await start((server) => servers.push(server));
  await done;
  cpu.last = sample();
  const seconds = (route.last - route.first) / 1000;
  const perSecond = (EVENTS - 1) / seconds;
  // Without the first fifth: the processes start cold (code not yet optimised, connections not yet open).
  const from = Math.floor(EVENTS / 5);
  const steadyPerSecond = (EVENTS - 1 - from) / ((route.times[EVENTS - 1] - route.times[from]) / 1000);
  const serverCpu = servers.map((_, i) => (cpu.last.servers[i] ?? NaN) - (cpu.first?.servers[i] ?? NaN));
  const result = {
    label,
    deliveries: EVENTS,
    attempts: route.attempts,
    duplicates: route.attempts - route.unique,
    secondsFirstToLast: seconds,
    secondsFromStart: (route.last - startedAt) / 1000,
    deliveriesPerSecond: perSecond,
    steadyDeliveriesPerSecond: steadyPerSecond,
    cpu: {
      // fractions of one core over the window
      canon: serverCpu.map((s) => s / seconds),
      postgres: cpu.first?.pg ? cpuSecondsBetween(cpu.first.pg, cpu.last.pg) / seconds : null,
      receiver: (cpu.last.self - cpu.first.self) / seconds,
    },
    canonCpuMicrosPerDelivery: (serverCpu.reduce((s, x) => s + x, 0) * 1e6) / (EVENTS - 1),
  };
  console.log(
    `bench: ${label}: ${fmt(perSecond)} deliveries/s (${fmt(EVENTS)} in ${seconds.toFixed(2)} s from the first to the last; ${fmt(steadyPerSecond)}/s without the first fifth; Canon CPU ${result.cpu.canon.map((c) => `${fmt(c * 100)}%`).join(' + ')}, ` +
      `PostgreSQL ${result.cpu.postgres === null ? 'n/a' : `${fmt(result.cpu.postgres * 100)}%`}, receiver ${fmt(result.cpu.receiver * 100)}%; ${fmt(result.canonCpuMicrosPerDelivery)} µs Canon CPU per delivery)`,
  );
  for (const s of servers) await stopServer(s);
  return result;
}

async function sqliteThroughput() {
  const dir = makeTempDir('canon-bench-webhooks-');
  const databaseUrl = `sqlite:${path.join(dir, 'canon.db')}`;
  // The first worker ever starts at the log's head: prime it once (endpoint registered, one delivery made).
  let { server, base } = await serve(databaseUrl, 'embedded', { name: 'canon-sqlite-prime' });
  const { route } = await endpoint(base, 'sqlite');
  await primed(base, route);
  await stopServer(server);
  const runs = [];
  for (let r = 1; r <= REPEATS; r++) {
    ({ server, base } = await serve(databaseUrl, 'off', { name: `canon-sqlite-writer-${r}` }));
    const t = performance.now();
    await createProducts(base, HEADERS, EVENTS, { label: `sqlite-${r}` });
    console.log(`bench: SQLite run ${r}: ${fmt(EVENTS)} products created in ${((performance.now() - t) / 1000).toFixed(1)} s with the worker off`);
    await stopServer(server);
    runs.push(
      await drain(`(a) SQLite, canon serve with the embedded worker, run ${r}`, route, (track) => serve(databaseUrl, 'embedded', { name: `canon-sqlite-embedded-${r}`, track })),
    );
    reportProfile(`canon-sqlite-embedded-${r}`);
  }
  return runs;
}

/**
 * One worker against two on PostgreSQL. `delayMs` 0: a receiver answering at once, so each worker is bound by
 * CPU (and two share this machine's two cores with PostgreSQL and the receiver). `delayMs` > 0: a receiver that
 * takes that long, so each worker is bound by its attempts in flight and two show how the work is shared.
 */
async function pgThroughput(delayMs = 0) {
  const tag = delayMs > 0 ? `, receiver answering after ${delayMs} ms` : '';
  const db = await createDatabase();
  const api = await serve(db.url, 'off', { name: 'canon-pg-api' });
  const { route } = await endpoint(api.base, 'pg', delayMs);
  const workerEnv = { ...webhookEnv };
  const worker = (name, core, track) =>
    startCanonWorker({
      track,
      databaseUrl: db.url,
      adminKey: ADMIN_KEY,
      pinned: pinning.pinned,
      name,
      profileName: name,
      env: workerEnv,
      ...(core !== undefined ? { core } : {}),
    });
  const first = await worker('canon-pg-worker-prime');
  await primed(api.base, route);
  await stopServer(first);
  const one = [];
  const two = [];
  for (let r = 1; r <= REPEATS; r++) {
    // Odd repeats measure one worker first, even ones two workers first.
    const order = r % 2 === 1 ? ['one', 'two'] : ['two', 'one'];
    for (const which of order) {
      const t = performance.now();
      await createProducts(api.base, HEADERS, EVENTS, { label: `pg-${r}-${which}` });
      console.log(`bench: PostgreSQL run ${r}: ${fmt(EVENTS)} products created in ${((performance.now() - t) / 1000).toFixed(1)} s with no worker running`);
      if (which === 'one') {
        one.push(await drain(`(b) PostgreSQL, one canon worker${tag}, run ${r}`, route, (track) => worker(`canon-pg-worker-1-${r}`, undefined, track)));
        reportProfile(`canon-pg-worker-1-${r}`);
      } else {
        two.push(
          await drain(`(c) PostgreSQL, two canon worker processes${SPREAD ? ' (second on the client core)' : ''}${tag}, run ${r}`, route, (track) =>
            Promise.all([worker(`canon-pg-worker-2a-${r}`, undefined, track), worker(`canon-pg-worker-2b-${r}`, SPREAD ? CLIENT_CORE : undefined, track)]),
          ),
        );
      }
    }
  }
  await stopServer(api.server);
  return { postgres: db.version, receiverDelayMs: delayMs, one, two };
}

/**
 * Commit → first attempt: one product at a time at about LATENCY_RATE per second (the gap jittered ±50 % so the
 * sends do not lock onto a poll timer), measured from the POST's answer (the commit is done) to the receiver's
 * arrival, both on this process's clock; also from the event's created_at (the server's clock, taken before its commit).
 */
async function latencyRun(label, api, route) {
  const pending = new Map();
  const fromAnswer = new LatencyHistogram();
  const fromCreatedAt = new LatencyHistogram();
  const samples = [];
  route.onDelivery = (d) => {
    if (d.duplicate) return;
    const id = d.event?.data?.object?.id;
    const sent = pending.get(id);
    if (!sent) return;
    pending.delete(id);
    const ms = d.at - sent.answeredAt;
    fromAnswer.record(ms);
    fromCreatedAt.record(Math.max(0, d.atEpochMs - Date.parse(d.event.created_at)));
    samples.push(ms);
  };
  const agentless = { headers: HEADERS, timeoutMs: 10_000 };
  const until = performance.now() + LATENCY_SECONDS * 1000;
  let sent = 0;
  // Warm-up: a few events not counted.
  for (let i = 0; i < 5; i++)
    await request('POST', `${api.base}/v2/products`, { ...agentless, body: { name: `warm ${i}`, price: { amount: 100, currency: 'EUR' }, status: 'active', tags: [] } });
  await sleep(500);
  while (performance.now() < until) {
    const res = await request('POST', `${api.base}/v2/products`, {
      ...agentless,
      body: { name: `latency ${sent}`, price: { amount: 100 + sent, currency: 'EUR' }, status: 'active', tags: [] },
    });
    const answeredAt = performance.now();
    if (res.status !== 201) throw new Error(`POST /v2/products answered ${res.status}: ${res.body.slice(0, 300)}`);
    pending.set(JSON.parse(res.body).id, { answeredAt });
    sent++;
    await sleep((1000 / LATENCY_RATE) * (0.5 + Math.random()));
  }
  const deadline = performance.now() + 10_000;
  while (pending.size > 0 && performance.now() < deadline) await sleep(20);
  route.onDelivery = undefined;
  const result = {
    label,
    sent,
    received: fromAnswer.total,
    missing: pending.size,
    fromAnswerMs: fromAnswer.summary(),
    fromCreatedAtMs: fromCreatedAt.summary(),
    maxMs: Math.max(...samples),
  };
  console.log(
    `bench: ${label}: ${sent} events, commit → first attempt p50 ${fmt(result.fromAnswerMs.p50, 2)} ms, p99 ${fmt(result.fromAnswerMs.p99, 2)} ms, max ${fmt(result.maxMs, 2)} ms ` +
      `(from created_at: p50 ${fmt(result.fromCreatedAtMs.p50, 2)}, p99 ${fmt(result.fromCreatedAtMs.p99, 2)} ms)${pending.size ? `; ${pending.size} NEVER ARRIVED` : ''}`,
  );
  return result;
}

async function latency() {
  const out = {};
  const db = await createDatabase();
  const redis = await redisPrefix();
  for (const withRedis of [true, false]) {
    const env = withRedis ? { REDIS_URL: redis.url, CANON_REDIS_PREFIX: redis.prefix } : {};
    const api = await serve(db.url, 'off', { name: `canon-pg-latency-api-${withRedis ? 'redis' : 'plain'}`, env });
    const { route } = await endpoint(api.base, `latency-${withRedis}`);
    const w = await startCanonWorker({ databaseUrl: db.url, adminKey: ADMIN_KEY, pinned: pinning.pinned, name: 'canon-pg-latency-worker', env: { ...webhookEnv, ...env } });
    await primed(api.base, route);
    const key = withRedis ? 'postgresRedis' : 'postgresNoRedis';
    out[key] = await latencyRun(
      withRedis ? 'PostgreSQL, API process + canon worker, with Redis' : 'PostgreSQL, API process + canon worker, without Redis (NOTIFY, polling)',
      api,
      route,
    );
    await stopServer(w);
    await stopServer(api.server);
  }
  const dir = makeTempDir('canon-bench-webhooks-latency-');
  const api = await serve(`sqlite:${path.join(dir, 'canon.db')}`, 'embedded', { name: 'canon-sqlite-latency' });
  const { route } = await endpoint(api.base, 'latency-sqlite');
  await primed(api.base, route);
  out.sqliteEmbedded = await latencyRun('SQLite, canon serve with the embedded worker', api, route);
  await stopServer(api.server);
  return out;
}

async function main() {
  pinning = setUpPinning();
  headline(`webhooks (${fmt(EVENTS)} events, ${REPEATS} repeats)`, pinning);
  certs = makeCertificates();
  receiver = await startReceiver(certs, { keepBodies: true });
  webhookEnv = { NODE_EXTRA_CA_CERTS: certs.caFile, CANON_WEBHOOK_ALLOW_PRIVATE: '1' };

  const results = {};
  if (PARTS.includes('sqlite')) results.sqlite = await sqliteThroughput();
  if (PARTS.includes('pg')) results.postgres = await pgThroughput();
  if (PARTS.includes('pg-slow')) results.postgresSlowReceiver = await pgThroughput(SLOW_RECEIVER_MS);
  if (PARTS.includes('latency')) results.latency = await latency();

  const summary = {};
  const verdicts = {};
  console.log('');
  if (results.sqlite) {
    summary.sqlitePerSecond = median(results.sqlite.map((r) => r.deliveriesPerSecond));
    verdicts.sqlite = { value: summary.sqlitePerSecond, target: TARGETS.sqlite, met: summary.sqlitePerSecond >= TARGETS.sqlite };
    console.log(
      `(a) SQLite embedded: ${results.sqlite.map((r) => fmt(r.deliveriesPerSecond)).join(', ')} deliveries/s, median ${fmt(summary.sqlitePerSecond)} (target >= ${fmt(TARGETS.sqlite)}: ${verdicts.sqlite.met ? 'MET' : 'NOT MET'})`,
    );
  }
  if (results.postgres) {
    const { one, two } = results.postgres;
    summary.pgOnePerSecond = median(one.map((r) => r.deliveriesPerSecond));
    summary.pgTwoPerSecond = median(two.map((r) => r.deliveriesPerSecond));
    summary.twoOverOne = median(one.map((r, i) => two[i].deliveriesPerSecond / r.deliveriesPerSecond));
    verdicts.pgPerWorker = { value: summary.pgOnePerSecond, target: TARGETS.perWorker, met: summary.pgOnePerSecond >= TARGETS.perWorker };
    verdicts.twoOverOne = { value: summary.twoOverOne, target: TARGETS.twoOverOne, met: summary.twoOverOne >= TARGETS.twoOverOne };
    console.log(
      `(b) PostgreSQL, one worker: ${one.map((r) => fmt(r.deliveriesPerSecond)).join(', ')} deliveries/s, median ${fmt(summary.pgOnePerSecond)} (target >= ${fmt(TARGETS.perWorker)}: ${verdicts.pgPerWorker.met ? 'MET' : 'NOT MET'})`,
    );
    console.log(`(c) PostgreSQL, two workers: ${two.map((r) => fmt(r.deliveriesPerSecond)).join(', ')} deliveries/s, median ${fmt(summary.pgTwoPerSecond)}`);
    console.log(
      `(c)/(b) per repeat: ${one.map((r, i) => fmt(two[i].deliveriesPerSecond / r.deliveriesPerSecond, 2)).join(', ')}, median ${fmt(summary.twoOverOne, 2)}x (target >= ${TARGETS.twoOverOne}x: ${verdicts.twoOverOne.met ? 'MET' : 'NOT MET'})`,
    );
  }
  if (results.postgresSlowReceiver) {
    const { one, two } = results.postgresSlowReceiver;
    summary.slowOnePerSecond = median(one.map((r) => r.deliveriesPerSecond));
    summary.slowTwoPerSecond = median(two.map((r) => r.deliveriesPerSecond));
    summary.slowTwoOverOne = median(one.map((r, i) => two[i].deliveriesPerSecond / r.deliveriesPerSecond));
    verdicts.slowTwoOverOne = { value: summary.slowTwoOverOne, target: TARGETS.twoOverOne, met: summary.slowTwoOverOne >= TARGETS.twoOverOne };
    console.log(
      `receiver answering after ${SLOW_RECEIVER_MS} ms: one worker ${one.map((r) => fmt(r.deliveriesPerSecond)).join(', ')}/s, two workers ${two.map((r) => fmt(r.deliveriesPerSecond)).join(', ')}/s; ` +
        `two / one per repeat ${one.map((r, i) => fmt(two[i].deliveriesPerSecond / r.deliveriesPerSecond, 2)).join(', ')}, median ${fmt(summary.slowTwoOverOne, 2)}x (target >= ${TARGETS.twoOverOne}x: ${verdicts.slowTwoOverOne.met ? 'MET' : 'NOT MET'})`,
    );
  }
  if (results.latency) {
    const l = results.latency;
    verdicts.latencyRedis = { value: l.postgresRedis.fromAnswerMs.p99, target: TARGETS.p99Redis, met: l.postgresRedis.fromAnswerMs.p99 <= TARGETS.p99Redis };
    verdicts.latencyNoRedis = { value: l.postgresNoRedis.fromAnswerMs.p99, target: TARGETS.p99Polling, met: l.postgresNoRedis.fromAnswerMs.p99 <= TARGETS.p99Polling };
    for (const r of [l.postgresRedis, l.postgresNoRedis, l.sqliteEmbedded])
      console.log(`latency, ${r.label}: p50 ${fmt(r.fromAnswerMs.p50, 2)} ms, p99 ${fmt(r.fromAnswerMs.p99, 2)} ms (${r.received} of ${r.sent})`);
    console.log(
      `commit → first attempt p99 with Redis <= ${TARGETS.p99Redis} ms: ${verdicts.latencyRedis.met ? 'MET' : 'NOT MET'}; without Redis <= ${TARGETS.p99Polling} ms: ${verdicts.latencyNoRedis.met ? 'MET' : 'NOT MET'}`,
    );
  }

  const source = sourceVersion();
  const problems = sourceProblems(source).concat(receiver.problems);
  for (const r of [
    ...(results.sqlite ?? []),
    ...(results.postgres?.one ?? []),
    ...(results.postgres?.two ?? []),
    ...(results.postgresSlowReceiver?.one ?? []),
    ...(results.postgresSlowReceiver?.two ?? []),
  ]) {
    if (r.duplicates > 0) console.log(`bench: note ${r.label}: ${r.duplicates} duplicate deliveries (at-least-once)`);
  }
  for (const r of Object.values(results.latency ?? {})) if (r.missing > 0) problems.push(`${r.label}: ${r.missing} events never delivered`);
  writeResults(RESULTS_FILE, {
    ...resultsHeader('webhooks', source, pinning, {
      events: EVENTS,
      repeats: REPEATS,
      receiver: 'node:https in the benchmark process (client core), 200 at once, every delivery verified with standardwebhooks',
      slowReceiverMs: SLOW_RECEIVER_MS,
      workers: SPREAD ? 'two-worker runs: one on the server core, one on the client core' : 'every worker on the server core',
      latencyRate: LATENCY_RATE,
      latencySeconds: LATENCY_SECONDS,
    }),
    results,
    summary,
    verdicts,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
