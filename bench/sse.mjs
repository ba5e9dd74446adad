#!/usr/bin/env node
// Benchmark (issue 15): commit → Server-Sent Events client latency (same process, and across processes on PostgreSQL + Redis) and 10,000 concurrent streams (fan-out time, memory per idle stream).
//
//   npm run build && node bench/sse.mjs
//
// Streams are held by load-client processes (bench/lib/sse-swarm.mjs) over raw HTTP/1.1 sockets, pinned with
// this process to the client core; Canon runs on the server core. Every time is CLOCK_MONOTONIC (process.hrtime),
// the same clock in every process, so a POST's answer here and a frame's arrival in a client compare directly.
// - Latency: one stream, one product created at a time (BENCH_LATENCY_RATE per second, default 20, the gap
//   jittered ±50 %) for BENCH_LATENCY_SECONDS (default 10): the POST's answer (its commit is done) → the frame's
//   arrival. (a) SQLite, the stream on the writing process; (b) PostgreSQL, same process; (c) PostgreSQL + Redis,
//   the stream on another Canon process than the writer.
// - Scale: BENCH_STREAMS streams (default 10,000) on one canon serve (SQLite) from BENCH_SWARMS client processes
//   (default 2); server RSS (/proc/<pid>/status) before and with every stream open and idle; then BENCH_FANOUTS
//   products (default 10), one a second: for each, the time from the POST's answer to each stream's frame.
// Results go to bench/results/sse.json.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCanon } from './lib/canon.mjs';
import { cpuSecondsOf, setUpPinning } from './lib/cpu.mjs';
import { LatencyHistogram } from './lib/load.mjs';
import { RESULTS_DIR, ROOT, fmt, intFromEnv } from './lib/options.mjs';
import { createDatabase, redisPrefix } from './lib/pg.mjs';
import { freePort, makeTempDir, onCleanup, request, runMain, stopServer, waitUntilReady } from './lib/processes.mjs';
import { headline, median, resultsHeader, sourceProblems, sourceVersion, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'sse.json');
const SWARM = path.join(ROOT, 'bench/lib/sse-swarm.mjs');
const ADMIN_KEY = 'ck_bench_sse_0123456789abcdef0123';
const HEADERS = { 'x-api-key': ADMIN_KEY };
const LATENCY_RATE = intFromEnv('BENCH_LATENCY_RATE', 20, 1, 500);
const LATENCY_SECONDS = intFromEnv('BENCH_LATENCY_SECONDS', 10, 1, 600);
const STREAMS = intFromEnv('BENCH_STREAMS', 10_000, 1, 100_000);
const SWARMS = intFromEnv('BENCH_SWARMS', 2, 1, 16);
const FANOUTS = intFromEnv('BENCH_FANOUTS', 10, 1, 1000);
const PARTS = (process.env.BENCH_PARTS ?? 'latency,scale').split(',');
const TARGETS = { sameProcessP99: 20, crossProcessP99: 50, fanoutP99: 500, bytesPerStream: 16 * 1024 };

let pinning;
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/** Canon holds one descriptor per stream plus its own; each client process one per stream it holds. */
const FILES_NEEDED = STREAMS + 1000;
const RAISED = 'BENCH_SSE_FILES_RAISED';

/** The soft limit on open files of this process (Canon and the clients inherit it). */
function openFilesLimit() {
  const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return { soft: m?.[1] === 'unlimited' ? Infinity : Number(m?.[1]), hard: m?.[2] === 'unlimited' ? Infinity : Number(m?.[2]) };
}

function rssBytes(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

async function serve(databaseUrl, name, env = {}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = startCanon(port, { databaseUrl, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: name, name, env: { CANON_WORKER: 'off', ...env } });
  await waitUntilReady(server, base);
  return { server, base, port };
}

/** A client process holding `count` streams on `port`; resolves once all answered. `onEvent` gets each event's arrivals. */
async function swarm(port, count, onEvent) {
  const child = fork(SWARM, [String(port), String(count), ADMIN_KEY], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  onCleanup(async () => child.kill('SIGKILL'));
  const waiters = new Map();
  const once = (type) => new Promise((resolve) => waiters.set(type, resolve));
  child.on('message', (m) => {
    if (m.type === 'event') onEvent(m);
    else waiters.get(m.type)?.(m);
  });
  const opened = await Promise.race([
    once('open'),
    new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`the stream client exited (${code}) before opening its streams`)))),
  ]);
  if (opened.failed > 0) throw new Error(`${opened.failed} of ${count} streams were refused or failed`);
  return {
    child,
    flush: async () => {
      child.send({ type: 'flush' });
      await once('flushed');
    },
    close: async () => {
      if (!child.connected) return;
      child.send({ type: 'close' });
      await Promise.race([once('closed'), sleep(5000)]);
    },
  };
}

function createProduct(base, i, label) {
  return request('POST', `${base}/v2/products`, {
    headers: HEADERS,
    body: { name: `${label} ${i}`, price: { amount: 100 + i, currency: 'EUR' }, status: 'active', tags: [] },
    timeoutMs: 10_000,
  }).then((res) => {
    if (res.status !== 201) throw new Error(`POST /v2/products answered ${res.status}: ${res.body.slice(0, 300)}`);
    return JSON.parse(res.body).id;
  });
}

/** One stream on `streamPort`, products created one at a time on `writeBase`: the POST's answer → the frame. */
async function latencyRun(label, writeBase, streamPort) {
  const answered = new Map();
  const arrivals = new Map();
  const histogram = new LatencyHistogram();
  const samples = [];
  // A frame can reach the client before the POST's answer reaches this process (the commit wakes the hub first):
  // such a latency counts as 0, and how many did so is reported.
  const sample = (ms) => {
    histogram.record(Math.max(0, ms));
    samples.push(ms);
  };
  const client = await swarm(streamPort, 1, (m) => {
    arrivals.set(m.productId, m.arrivals[0]);
    const sent = answered.get(m.productId);
    if (sent !== undefined) sample(m.arrivals[0] - sent);
  });
  for (let i = 0; i < 5; i++) await createProduct(writeBase, i, 'warm-up');
  await sleep(500);
  const until = nowMs() + LATENCY_SECONDS * 1000;
  let sent = 0;
  while (nowMs() < until) {
    const id = await createProduct(writeBase, sent, 'latency');
    const at = nowMs();
    answered.set(id, at);
    // The frame may arrive before this line runs: it is then matched here.
    if (arrivals.has(id)) sample(arrivals.get(id) - at);
    sent++;
    await sleep((1000 / LATENCY_RATE) * (0.5 + Math.random()));
  }
  await sleep(2000);
  await client.close();
  const received = [...answered.keys()].filter((id) => arrivals.has(id)).length;
  const result = {
    label,
    sent,
    received,
    missing: sent - received,
    latencyMs: histogram.summary(),
    maxMs: Math.max(...samples),
    beforeTheAnswer: samples.filter((s) => s < 0).length,
  };
  console.log(
    `bench: ${label}: ${sent} events, commit → SSE client p50 ${fmt(result.latencyMs.p50, 2)} ms, p99 ${fmt(result.latencyMs.p99, 2)} ms, max ${fmt(result.maxMs, 2)} ms` +
      (result.beforeTheAnswer ? ` (${result.beforeTheAnswer} frames arrived before the POST's answer: counted as 0)` : '') +
      (result.missing ? `; ${result.missing} NEVER ARRIVED` : ''),
  );
  return result;
}

async function latency() {
  const out = {};
  const dir = makeTempDir('canon-bench-sse-');
  const sqlite = await serve(`sqlite:${path.join(dir, 'canon.db')}`, 'canon-sse-sqlite');
  out.sqliteSameProcess = await latencyRun('(a) SQLite, stream and writes on one process', sqlite.base, sqlite.port);
  await stopServer(sqlite.server);

  const db = await createDatabase();
  const pgOne = await serve(db.url, 'canon-sse-pg');
  out.postgresSameProcess = await latencyRun('(b) PostgreSQL, stream and writes on one process', pgOne.base, pgOne.port);
  await stopServer(pgOne.server);

  const redis = await redisPrefix();
  const env = { REDIS_URL: redis.url, CANON_REDIS_PREFIX: redis.prefix };
  const writer = await serve(db.url, 'canon-sse-pg-writer', env);
  const reader = await serve(db.url, 'canon-sse-pg-reader', env);
  out.postgresCrossProcess = await latencyRun('(c) PostgreSQL + Redis, writes on one process, the stream on another', writer.base, reader.port);
  await stopServer(reader.server);
  await stopServer(writer.server);
  return out;
}

async function scale() {
  const limits = openFilesLimit();
  if (limits.soft < FILES_NEEDED) {
    throw new Error(`the open-files limit is ${limits.soft} (hard ${limits.hard}); ${fmt(STREAMS)} streams need about ${fmt(FILES_NEEDED)}: lower BENCH_STREAMS`);
  }
  console.log(`bench: open-files limit ${limits.soft} (hard ${limits.hard}), inherited by Canon and the clients: enough for ${fmt(STREAMS)} streams`);
  const dir = makeTempDir('canon-bench-sse-scale-');
  const env = { CANON_SSE_MAX_STREAMS_PER_PRINCIPAL: String(STREAMS + 100) };
  const { server, base, port } = await serve(`sqlite:${path.join(dir, 'canon.db')}`, 'canon-sse-scale', env);
  const pid = server.child.pid;
  // Warm-up: the stream and write paths run once before the baseline is read.
  const warm = await swarm(port, 50, () => undefined);
  for (let i = 0; i < 5; i++) await createProduct(base, i, 'warm-up');
  await sleep(500);
  await warm.close();
  await sleep(2000);
  const rssBefore = rssBytes(pid);

  const perEvent = new Map();
  const onEvent = (m) => {
    const e = perEvent.get(m.productId) ?? { arrivals: [] };
    for (const a of m.arrivals) e.arrivals.push(a);
    perEvent.set(m.productId, e);
  };
  const opening = nowMs();
  const per = Math.ceil(STREAMS / SWARMS);
  const swarms = await Promise.all(Array.from({ length: SWARMS }, (_, i) => swarm(port, Math.min(per, STREAMS - i * per), onEvent)));
  const openSeconds = (nowMs() - opening) / 1000;
  console.log(`bench: ${fmt(STREAMS)} streams open in ${openSeconds.toFixed(1)} s from ${SWARMS} client processes`);
  await sleep(5000);
  const rssOpen = rssBytes(pid);
  const bytesPerStream = (rssOpen - rssBefore) / STREAMS;
  console.log(
    `bench: server RSS ${fmt(rssBefore / 2 ** 20, 1)} MiB before, ${fmt(rssOpen / 2 ** 20, 1)} MiB with ${fmt(STREAMS)} idle streams: ${fmt(bytesPerStream / 1024, 2)} KiB per stream`,
  );

  const fanouts = [];
  for (let i = 0; i < FANOUTS; i++) {
    const cpuBefore = cpuSecondsOf(pid);
    const id = await createProduct(base, i, 'fan-out');
    const answeredAt = nowMs();
    const deadline = answeredAt + 10_000;
    while ((perEvent.get(id)?.arrivals.length ?? 0) < STREAMS && nowMs() < deadline) await sleep(5);
    if ((perEvent.get(id)?.arrivals.length ?? 0) < STREAMS) for (const s of swarms) await s.flush();
    const cpuAfter = cpuSecondsOf(pid);
    const arrivals = perEvent.get(id)?.arrivals ?? [];
    const latencies = arrivals.map((a) => a - answeredAt).sort((a, b) => a - b);
    const pick = (p) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
    const r = { received: latencies.length, p50: pick(50), p99: pick(99), last: latencies[latencies.length - 1], serverCpuSeconds: cpuAfter - cpuBefore };
    fanouts.push(r);
    console.log(
      `bench: fan-out ${i + 1}: ${fmt(r.received)} of ${fmt(STREAMS)} streams, POST answer → frame p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms, last ${fmt(r.last, 1)} ms (server CPU ${fmt(r.serverCpuSeconds * 1000)} ms)`,
    );
    await sleep(1000);
  }
  for (const s of swarms) await s.close();
  await sleep(3000);
  const rssAfterClose = rssBytes(pid);
  await stopServer(server);
  return {
    streams: STREAMS,
    clientProcesses: SWARMS,
    openFilesLimit: limits,
    openSeconds,
    rssBefore,
    rssOpen,
    rssAfterClose,
    bytesPerStream,
    fanouts,
    median: { p50: median(fanouts.map((f) => f.p50)), p99: median(fanouts.map((f) => f.p99)), last: median(fanouts.map((f) => f.last)) },
  };
}

/**
 * When the soft open-files limit is below what the streams need and the hard limit allows it, runs this script
 * again under `sh -c 'ulimit -n <n>; exec node …'` (once), so that it, Canon and the clients inherit the raised
 * limit; returns true when it did (this process then only waits for that one).
 */
async function rerunWithMoreFiles() {
  const limits = openFilesLimit();
  if (!PARTS.includes('scale') || limits.soft >= FILES_NEEDED || process.env[RAISED]) return false;
  if (limits.hard < FILES_NEEDED) {
    throw new Error(`the open-files hard limit is ${limits.hard}; ${fmt(STREAMS)} streams need about ${fmt(FILES_NEEDED)}: raise it (ulimit -Hn, as root) or lower BENCH_STREAMS`);
  }
  const target = Math.min(limits.hard, Math.max(FILES_NEEDED, 65_536));
  console.log(`bench: open-files limit ${limits.soft} is too low for ${fmt(STREAMS)} streams: running again under ulimit -n ${target}`);
  const { spawn } = await import('node:child_process');
  const child = spawn('sh', ['-c', `ulimit -n ${target} && exec "$0" "$@"`, process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, [RAISED]: '1' },
  });
  process.exitCode = await new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  return true;
}

async function main() {
  if (await rerunWithMoreFiles()) return;
  pinning = setUpPinning();
  headline('SSE latency and scale', pinning);
  const results = {};
  if (PARTS.includes('latency')) results.latency = await latency();
  if (PARTS.includes('scale')) results.scale = await scale();

  const verdicts = {};
  console.log('');
  if (results.latency) {
    const l = results.latency;
    verdicts.sameProcess = { value: l.sqliteSameProcess.latencyMs.p99, target: TARGETS.sameProcessP99, met: l.sqliteSameProcess.latencyMs.p99 <= TARGETS.sameProcessP99 };
    verdicts.sameProcessPostgres = {
      value: l.postgresSameProcess.latencyMs.p99,
      target: TARGETS.sameProcessP99,
      met: l.postgresSameProcess.latencyMs.p99 <= TARGETS.sameProcessP99,
    };
    verdicts.crossProcess = { value: l.postgresCrossProcess.latencyMs.p99, target: TARGETS.crossProcessP99, met: l.postgresCrossProcess.latencyMs.p99 <= TARGETS.crossProcessP99 };
    for (const r of Object.values(l)) console.log(`${r.label}: p50 ${fmt(r.latencyMs.p50, 2)} ms, p99 ${fmt(r.latencyMs.p99, 2)} ms (${r.received} of ${r.sent})`);
    console.log(
      `same process p99 <= ${TARGETS.sameProcessP99} ms: SQLite ${verdicts.sameProcess.met ? 'MET' : 'NOT MET'}, PostgreSQL ${verdicts.sameProcessPostgres.met ? 'MET' : 'NOT MET'}; ` +
        `across processes p99 <= ${TARGETS.crossProcessP99} ms: ${verdicts.crossProcess.met ? 'MET' : 'NOT MET'}`,
    );
  }
  if (results.scale) {
    const s = results.scale;
    verdicts.fanout = { value: s.median.p99, target: TARGETS.fanoutP99, met: s.median.p99 <= TARGETS.fanoutP99 };
    verdicts.fanoutLast = { value: s.median.last, target: TARGETS.fanoutP99, met: s.median.last <= TARGETS.fanoutP99 };
    verdicts.memory = { value: s.bytesPerStream, target: TARGETS.bytesPerStream, met: s.bytesPerStream <= TARGETS.bytesPerStream };
    console.log(
      `fan-out to ${fmt(s.streams)} streams, median of ${s.fanouts.length}: p50 ${fmt(s.median.p50, 1)} ms, p99 ${fmt(s.median.p99, 1)} ms, last stream ${fmt(s.median.last, 1)} ms ` +
        `(target p99 <= ${TARGETS.fanoutP99} ms: ${verdicts.fanout.met ? 'MET' : 'NOT MET'}; last stream: ${verdicts.fanoutLast.met ? 'within' : 'beyond'} it)`,
    );
    console.log(`memory per idle stream: ${fmt(s.bytesPerStream / 1024, 2)} KiB (target <= 16 KiB: ${verdicts.memory.met ? 'MET' : 'NOT MET'})`);
  }
  const source = sourceVersion();
  const problems = sourceProblems(source);
  for (const r of Object.values(results.latency ?? {})) if (r.missing > 0) problems.push(`${r.label}: ${r.missing} events never reached the stream`);
  for (const [i, f] of (results.scale?.fanouts ?? []).entries())
    if (f.received < STREAMS) problems.push(`fan-out ${i + 1}: ${STREAMS - f.received} streams never received the event`);
  writeResults(RESULTS_FILE, {
    ...resultsHeader('sse', source, pinning, {
      client: 'raw HTTP/1.1 sockets in child processes (bench/lib/sse-swarm.mjs) on the client core',
      latencyRate: LATENCY_RATE,
      latencySeconds: LATENCY_SECONDS,
      streams: STREAMS,
      swarms: SWARMS,
      fanouts: FANOUTS,
    }),
    results,
    verdicts,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
