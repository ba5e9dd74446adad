#!/usr/bin/env node
// Benchmark: GET /v2/products/{id} on Canon against a bare node:http server (bench/baselines/bare-http.mjs).
//
//   npm run bench                 (builds first)
//   node bench/get-by-id.mjs      (expects a fresh build in dist/)
//
// Method (see docs/BENCHMARKS.md): each server runs as a child process pinned to core 0 (`taskset -c 0`);
// this process, which hosts the autocannon client, pins itself to core 1. The servers are loaded one
// after the other, never together: start, wait for /healthz, warm up, measure, stop. Everything talks
// to 127.0.0.1 only. Results are printed as a table and written to bench/results/get-by-id.json.
//
// Environment: BENCH_DURATION (measured seconds, default 10), BENCH_CONNECTIONS (default 50),
// BENCH_WARMUP (warm-up seconds, default 3), BENCH_PIPELINING (default 1), BENCH_QUIET_WAIT (at most this
// many seconds, default 30, waiting for the machine to be idle before each measured run; 0 disables).
import autocannon from 'autocannon';
import { Buffer } from 'node:buffer';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CANON_CLI = path.join(ROOT, 'dist/src/cli/main.js');
const BARE_SERVER = path.join(ROOT, 'bench/baselines/bare-http.mjs');
const RESULTS_FILE = path.join(ROOT, 'bench/results/get-by-id.json');

const ADMIN_KEY = 'ck_bench_get_by_id_0123456789abcdef';
const TARGET_RATIO = 0.6;
const SERVER_CORE = '0';
const CLIENT_CORE = '1';
const READY_TIMEOUT_MS = 30_000;
const UNLIMITED_RATE = '1000000000/1';
// Read before pinning: once this process is pinned to one core, availableParallelism() reports 1.
const CORES = os.availableParallelism();
const CPU_MODEL = os.cpus()[0]?.model ?? 'unknown CPU';

function intFromEnv(name, fallback, min, max) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new Error(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

const DURATION = intFromEnv('BENCH_DURATION', 10, 1, 600);
const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000);
const WARMUP = intFromEnv('BENCH_WARMUP', 3, 0, 120);
const PIPELINING = intFromEnv('BENCH_PIPELINING', 1, 1, 100);
// Seconds to wait, at most, for the machine to be idle before each measured run (0: do not wait).
const QUIET_WAIT = intFromEnv('BENCH_QUIET_WAIT', 30, 0, 600);

// ---------------------------------------------------------------------------------------------------
// Child processes and clean-up: every child is tracked and killed on exit, on signals and on errors.

const children = new Set();
let tmpDir;

function killEverythingNow() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
  if (tmpDir) {
    rmSync(tmpDir, { recursive: true, force: true });
    tmpDir = undefined;
  }
}

process.on('exit', killEverythingNow);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    console.error(`\nbench: received ${signal}, stopping the servers`);
    killEverythingNow();
    process.exit(130);
  });
}

// ---------------------------------------------------------------------------------------------------
// CPU pinning.

function hasTaskset() {
  const probe = spawnSync('taskset', ['--version'], { stdio: 'ignore' });
  return !probe.error && probe.status === 0;
}

function allowedCpus(pid = 'self') {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return /^Cpus_allowed_list:\s*(.+)$/m.exec(status)?.[1]?.trim();
  } catch {
    return undefined;
  }
}

/** Pins every thread of this process (the autocannon client) to CLIENT_CORE; returns whether it worked. */
function pinSelf() {
  const result = spawnSync('taskset', ['-a', '-p', '-c', CLIENT_CORE, String(process.pid)], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    console.warn(`bench: WARNING could not pin the client to core ${CLIENT_CORE}: ${result.error?.message ?? result.stderr.trim()}`);
    return false;
  }
  return allowedCpus() === CLIENT_CORE;
}

function setUpPinning() {
  const cores = CORES;
  if (!hasTaskset()) {
    console.warn('bench: WARNING `taskset` is not available: servers and client run UNPINNED, figures are less reliable.');
    return { pinned: false, reason: 'taskset not found' };
  }
  if (cores < 2) {
    console.warn(`bench: WARNING only ${cores} core(s) available: servers and client run UNPINNED and compete for the CPU.`);
    return { pinned: false, reason: `${cores} core(s) available` };
  }
  const clientPinned = pinSelf();
  if (!clientPinned) console.warn(`bench: WARNING the client is not pinned (allowed CPUs: ${allowedCpus() ?? 'unknown'}).`);
  return { pinned: true, serverCore: Number(SERVER_CORE), clientCore: clientPinned ? Number(CLIENT_CORE) : null };
}

/** CPU seconds (user + system) a process has used so far, from /proc; undefined where unavailable. */
const CLOCK_TICKS = (() => {
  const probe = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const ticks = Number(probe.stdout?.trim());
  return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
})();

function cpuSecondsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime, stime (fields 14 and 15)
  } catch {
    return undefined;
  }
}

/** Busy and steal seconds per core since boot, from /proc/stat (to spot other load during a run). */
function coreTimes() {
  try {
    const cores = {};
    for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
      const match = /^cpu(\d+)\s+(.*)$/.exec(line);
      if (!match) continue;
      const [user, nice, system, , , irq, softirq, steal] = match[2].split(/\s+/).map(Number);
      cores[match[1]] = { busy: (user + nice + system + irq + softirq) / CLOCK_TICKS, steal: (steal || 0) / CLOCK_TICKS };
    }
    return cores;
  } catch {
    return undefined;
  }
}

/**
 * Waits (bounded by `maxSeconds`) until the whole machine used less than `threshold` of one core over a
 * one-second sample, so that a measured run does not start while something else is busy. Returns the last
 * sample (fraction of one core) and whether the machine was quiet.
 */
async function waitForQuiet(maxSeconds, threshold = 0.15) {
  let last = null;
  for (let i = 0; i < maxSeconds; i++) {
    const before = coreTimes();
    await sleep(1000);
    const after = coreTimes();
    if (!before || !after) return { quiet: null, busyCores: null };
    last = Object.keys(after).reduce((sum, core) => sum + after[core].busy - (before[core]?.busy ?? after[core].busy), 0);
    if (last < threshold) return { quiet: true, busyCores: last, waitedSeconds: i + 1 };
  }
  return { quiet: false, busyCores: last, waitedSeconds: maxSeconds };
}

function selfCpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

// ---------------------------------------------------------------------------------------------------
// Servers.

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

function startServer(name, script, args, env, pinned) {
  const command = pinned ? 'taskset' : process.execPath;
  const argv = pinned ? ['-c', SERVER_CORE, process.execPath, script, ...args] : [script, ...args];
  const child = spawn(command, argv, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-8192);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.once('error', (err) => {
    keep(`\n[spawn error] ${err.message}\n`);
    children.delete(child); // a child that could not be spawned counts as exited
  });
  const exited = new Promise((resolve) => {
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  return { name, child, exited, output: () => output, command: [command, ...argv].join(' ') };
}

function hasExited(server) {
  return server.child.exitCode !== null || server.child.signalCode !== null || !children.has(server.child);
}

async function stopServer(server) {
  if (hasExited(server)) return;
  server.child.kill('SIGTERM');
  const graceful = await Promise.race([server.exited, sleep(5000, null, { ref: false })]);
  if (graceful === null) {
    server.child.kill('SIGKILL');
    await Promise.race([server.exited, sleep(2000, null, { ref: false })]);
  }
}

/** One GET over a fresh connection, bounded in time. */
function get(url, headers = {}, timeoutMs = 2000) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent: false, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: chunks.join('') }));
      res.on('error', reject);
    });
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.once('error', reject);
  });
}

async function waitUntilReady(server, base) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastError = 'no attempt made';
  // Bounded twice: by the deadline and by the attempt count (100 ms apart, 2 s per attempt at most).
  for (let attempt = 0; attempt < 400 && Date.now() < deadline; attempt++) {
    if (hasExited(server)) {
      throw new Error(`${server.name} exited before answering /healthz (exit code ${server.child.exitCode}, signal ${server.child.signalCode}).\n--- its output ---\n${server.output()}`);
    }
    try {
      const res = await get(`${base}/healthz`, {}, Math.max(100, Math.min(2000, deadline - Date.now())));
      if (res.status === 200) return;
      lastError = `HTTP ${res.status}`;
    } catch (err) {
      lastError = err.message;
    }
    await sleep(100);
  }
  throw new Error(`${server.name} did not answer ${base}/healthz with 200 within ${READY_TIMEOUT_MS / 1000} s (last error: ${lastError}).\n--- its output ---\n${server.output()}`);
}

function childEnv(extra) {
  const env = { ...process.env, ...extra };
  delete env.NODE_ENV; // production mode would require CANON_SECRET and disable the demo seed
  delete env.NODE_OPTIONS; // keep inspector/profiler flags meant for this process away from the servers
  return env;
}

// ---------------------------------------------------------------------------------------------------
// Load.

/**
 * autocannon's own latency histogram has 1 ms resolution, too coarse for sub-millisecond answers, so the
 * response times it reports are also counted here in 10 µs buckets (up to 10 s; slower ones share the last).
 */
class LatencyHistogram {
  constructor() {
    this.bucketUs = 10;
    this.counts = new Uint32Array(1_000_001);
    this.total = 0;
  }

  record(ms) {
    const bucket = Math.min(this.counts.length - 1, Math.floor((ms * 1000) / this.bucketUs));
    this.counts[bucket]++;
    this.total++;
  }

  percentile(p) {
    if (this.total === 0) return undefined;
    const rank = Math.ceil((p / 100) * this.total);
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i];
      if (seen >= rank) return ((i + 1) * this.bucketUs) / 1000; // upper edge of the bucket, in ms
    }
    return undefined;
  }
}

function runLoad(title, url, headers, duration, histogram) {
  return new Promise((resolve, reject) => {
    let settled = false;
    const instance = autocannon(
      { title, url, headers, connections: CONNECTIONS, pipelining: PIPELINING, duration, timeout: 10 },
      (err, result) => {
        if (settled) return;
        settled = true;
        clearTimeout(guard);
        if (err) reject(err);
        else resolve(result);
      },
    );
    // autocannon stops by itself after `duration`; this guard only catches a client that hangs.
    const guard = setTimeout(() => {
      if (settled) return;
      settled = true;
      instance.stop();
      reject(new Error(`${title}: autocannon did not finish within ${duration + 30} s`));
    }, (duration + 30) * 1000);
    if (histogram) instance.on('response', (_client, _statusCode, _bytes, responseTimeMs) => histogram.record(responseTimeMs));
  });
}

function summarise(result, histogram, cpu) {
  return {
    requestsPerSecond: {
      average: result.requests.average,
      stddev: result.requests.stddev,
      min: result.requests.min,
      max: result.requests.max,
    },
    latencyMs: {
      // 10 µs resolution, from the response times autocannon reports (see LatencyHistogram)
      p50: histogram.percentile(50),
      p90: histogram.percentile(90),
      p99: histogram.percentile(99),
      p999: histogram.percentile(99.9),
      average: result.latency.average,
      max: result.latency.max,
      autocannon1msResolution: { p50: result.latency.p50, p99: result.latency.p99 },
    },
    cpuUtilisation: cpu,
    throughputBytesPerSecond: result.throughput.average,
    totalRequests: result.requests.total,
    '2xx': result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    resets: result.resets,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count])),
    durationSeconds: result.duration,
  };
}

async function benchmarkServer({ name, label, start, prepare }) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = start(port);
  try {
    await waitUntilReady(server, base);
    const serverCpus = allowedCpus(server.child.pid);
    const { url, headers, check } = await prepare(base);
    if (WARMUP > 0) {
      process.stdout.write(`bench: ${label}: warm-up ${WARMUP} s ... `);
      const warm = await runLoad(`${name} warm-up`, url, headers, WARMUP);
      console.log(`${Math.round(warm.requests.average)} req/s`);
    }
    let quiet = { quiet: null, busyCores: null, waitedSeconds: 0 };
    if (QUIET_WAIT > 0) {
      quiet = await waitForQuiet(QUIET_WAIT);
      if (quiet.quiet === false) console.warn(`bench: WARNING the machine stayed busy (${fmt(quiet.busyCores * 100)}% of a core) for ${QUIET_WAIT} s; measuring anyway.`);
    }
    process.stdout.write(`bench: ${label}: measuring ${DURATION} s with ${CONNECTIONS} connections ... `);
    const histogram = new LatencyHistogram();
    const serverCpuBefore = cpuSecondsOf(server.child.pid);
    const clientCpuBefore = selfCpuSeconds();
    const coresBefore = coreTimes();
    const wallBefore = process.hrtime.bigint();
    const measured = await runLoad(name, url, headers, DURATION, histogram);
    const wallSeconds = Number(process.hrtime.bigint() - wallBefore) / 1e9;
    const serverCpuAfter = cpuSecondsOf(server.child.pid);
    const coresAfter = coreTimes();
    const cpu = {
      // fractions of one core over the measured run; a server near 1.0 is the bottleneck
      server: serverCpuBefore === undefined || serverCpuAfter === undefined ? null : (serverCpuAfter - serverCpuBefore) / wallSeconds,
      client: (selfCpuSeconds() - clientCpuBefore) / wallSeconds,
      other: null,
      steal: null,
    };
    if (coresBefore && coresAfter && cpu.server !== null) {
      // Everything else that ran on the machine meanwhile (summed over all cores), and hypervisor steal.
      let busy = 0;
      let steal = 0;
      for (const core of Object.keys(coresAfter)) {
        busy += coresAfter[core].busy - (coresBefore[core]?.busy ?? coresAfter[core].busy);
        steal += coresAfter[core].steal - (coresBefore[core]?.steal ?? coresAfter[core].steal);
      }
      cpu.other = Math.max(0, busy / wallSeconds - cpu.server - cpu.client);
      cpu.steal = steal / wallSeconds;
    }
    console.log(`${Math.round(measured.requests.average)} req/s`);
    if (hasExited(server)) {
      throw new Error(`${server.name} died during the run (exit code ${server.child.exitCode}, signal ${server.child.signalCode}).\n--- its output ---\n${server.output()}`);
    }
    return { label, url, command: server.command, serverAllowedCpus: serverCpus ?? null, quietBeforeRun: quiet, check, ...summarise(measured, histogram, cpu) };
  } finally {
    await stopServer(server);
  }
}

// ---------------------------------------------------------------------------------------------------
// The two targets.

function canonTarget(pinned) {
  return {
    name: 'canon',
    label: 'Canon GET /v2/products/{id}',
    start: (port) => {
      if (!existsSync(CANON_CLI)) throw new Error(`${path.relative(ROOT, CANON_CLI)} is missing: build first (npx tsc -p . or npm run bench).`);
      tmpDir = mkdtempSync(path.join(os.tmpdir(), 'canon-bench-'));
      const env = childEnv({
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${path.join(tmpDir, 'canon.db')}`,
        CANON_ADMIN_API_KEY: ADMIN_KEY,
        CANON_LOG_LEVEL: 'warn',
        CANON_SEED: '1',
        // Rate limiting stays on (its bookkeeping is part of every request's cost), with limits far above
        // anything one core can serve so that no request is refused. CANON_RATE_LIMIT=off in the
        // environment still turns it off, to measure without it.
        CANON_RATE_LIMIT_PER_PRINCIPAL: UNLIMITED_RATE,
        CANON_RATE_LIMIT_PER_IP: UNLIMITED_RATE,
        CANON_RATE_LIMIT_GLOBAL: UNLIMITED_RATE,
      });
      return startServer('Canon', CANON_CLI, ['serve'], env, pinned);
    },
    prepare: async (base) => {
      const headers = { 'x-api-key': ADMIN_KEY };
      const list = await get(`${base}/v2/products?limit=1`, headers);
      if (list.status !== 200) throw new Error(`GET /v2/products?limit=1 answered ${list.status}: ${list.body.slice(0, 500)}`);
      const id = JSON.parse(list.body).data?.[0]?.id;
      if (typeof id !== 'string') throw new Error(`GET /v2/products?limit=1 returned no product (seeding off?): ${list.body.slice(0, 500)}`);
      const url = `${base}/v2/products/${encodeURIComponent(id)}`;
      const one = await get(url, headers);
      if (one.status !== 200) throw new Error(`GET /v2/products/${id} answered ${one.status}: ${one.body.slice(0, 500)}`);
      if (JSON.parse(one.body).id !== id) throw new Error(`GET /v2/products/${id} returned another resource: ${one.body.slice(0, 500)}`);
      for (const header of ['etag', 'last-modified', 'x-request-id']) {
        if (!one.headers[header]) throw new Error(`GET /v2/products/${id} has no ${header} header`);
      }
      return { url, headers, check: { status: one.status, bodyBytes: Buffer.byteLength(one.body), contentType: one.headers['content-type'] } };
    },
  };
}

function bareTarget(pinned) {
  return {
    name: 'bare',
    label: 'bare node:http (fixed JSON)',
    start: (port) => startServer('bare-http', BARE_SERVER, [], childEnv({ PORT: String(port), HOST: '127.0.0.1' }), pinned),
    prepare: async (base) => {
      const url = `${base}/v2/products/baseline`;
      const one = await get(url);
      if (one.status !== 200) throw new Error(`bare-http answered ${one.status}`);
      JSON.parse(one.body);
      return { url, headers: {}, check: { status: one.status, bodyBytes: Buffer.byteLength(one.body), contentType: one.headers['content-type'] } };
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Report.

function fmt(n, digits = 0) {
  return typeof n === 'number' && Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';
}

function printTable(rows) {
  const header = ['server', 'req/s (avg)', 'req/s stddev', 'p50 ms', 'p99 ms', '2xx', 'non-2xx', 'errors', 'server CPU', 'client CPU', 'other CPU'];
  const body = rows.map((r) => [
    r.label,
    fmt(r.requestsPerSecond.average),
    fmt(r.requestsPerSecond.stddev),
    fmt(r.latencyMs.p50, 2),
    fmt(r.latencyMs.p99, 2),
    fmt(r['2xx']),
    fmt(r.non2xx),
    fmt(r.errors + r.timeouts),
    r.cpuUtilisation.server === null ? 'n/a' : `${fmt(r.cpuUtilisation.server * 100)}%`,
    `${fmt(r.cpuUtilisation.client * 100)}%`,
    r.cpuUtilisation.other === null ? 'n/a' : `${fmt(r.cpuUtilisation.other * 100)}%`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of body) console.log(line(row));
}

/** The commit measured, and whether src/ had uncommitted changes (null outside a git checkout). */
function sourceVersion() {
  const git = (...args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  const head = git('rev-parse', 'HEAD');
  if (head.error || head.status !== 0) return null;
  const dirty = git('status', '--porcelain', '--', 'src');
  return { commit: head.stdout.trim(), srcDirty: dirty.status === 0 ? dirty.stdout.trim().length > 0 : null };
}

function autocannonVersion() {
  try {
    return JSON.parse(readFileSync(path.join(ROOT, 'node_modules/autocannon/package.json'), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

async function main() {
  const pinning = setUpPinning();
  const pinned = pinning.pinned;
  console.log(
    `bench: GET by id | node ${process.version} | ${CORES} cores (${CPU_MODEL}) | ` +
      (pinned ? `servers on core ${SERVER_CORE}, client on core ${pinning.clientCore ?? 'unpinned'}` : 'UNPINNED') +
      ` | warm-up ${WARMUP} s, measured ${DURATION} s, ${CONNECTIONS} connections, pipelining ${PIPELINING}`,
  );

  const canon = await benchmarkServer(canonTarget(pinned));
  const bare = await benchmarkServer(bareTarget(pinned));
  const ratio = canon.requestsPerSecond.average / bare.requestsPerSecond.average;

  const problems = [];
  for (const r of [canon, bare]) {
    if (r['2xx'] === 0) problems.push(`${r.label}: no 2xx responses at all`);
    if (r.non2xx !== 0) problems.push(`${r.label}: ${r.non2xx} non-2xx responses (status codes ${JSON.stringify(r.statusCodes)})`);
    if (r.errors !== 0 || r.timeouts !== 0) problems.push(`${r.label}: ${r.errors} errors, ${r.timeouts} timeouts`);
  }
  if (canon['2xx'] > 0 && canon.statusCodes['200'] !== canon['2xx']) problems.push(`Canon answered 2xx other than 200: ${JSON.stringify(canon.statusCodes)}`);

  console.log('');
  printTable([canon, bare]);
  console.log('');
  const verdict = problems.length > 0 ? 'INVALID RUN, see below' : `target >= ${TARGET_RATIO}x: ${ratio >= TARGET_RATIO ? 'MET' : 'NOT MET'}`;
  console.log(`Canon/bare requests/s ratio: ${ratio.toFixed(2)}x (${verdict})`);
  console.log(`Canon response: ${canon.check.bodyBytes} bytes, bare response: ${bare.check.bodyBytes} bytes`);
  if (pinned) console.log(`server CPU affinity as seen in /proc: Canon ${canon.serverAllowedCpus ?? 'n/a'}, bare ${bare.serverAllowedCpus ?? 'n/a'}`);
  for (const r of [canon, bare]) {
    if (r.cpuUtilisation.client > 0.9 && r.cpuUtilisation.server !== null && r.cpuUtilisation.server < 0.9) {
      console.warn(`bench: WARNING ${r.label}: the client used ${fmt(r.cpuUtilisation.client * 100)}% of its core and the server only ${fmt(r.cpuUtilisation.server * 100)}%: this figure is client-bound (a lower bound for the server).`);
    } else if (r.cpuUtilisation.client > 0.95) {
      console.warn(`bench: note ${r.label}: the client core was saturated too (${fmt(r.cpuUtilisation.client * 100)}%): the server may be able to do somewhat more than measured.`);
    }
    if (r.cpuUtilisation.other !== null && r.cpuUtilisation.other > 0.1) {
      console.warn(`bench: WARNING ${r.label}: other processes used ${fmt(r.cpuUtilisation.other * 100)}% of a core during the run: the machine was not quiet, rerun for reliable figures.`);
    }
    if (r.cpuUtilisation.steal !== null && r.cpuUtilisation.steal > 0.05) {
      console.warn(`bench: WARNING ${r.label}: the hypervisor stole ${fmt(r.cpuUtilisation.steal * 100)}% of a core during the run.`);
    }
  }

  const report = {
    benchmark: 'get-by-id',
    date: new Date().toISOString(),
    machine: {
      node: process.version,
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      cpuModel: CPU_MODEL,
      cores: CORES,
    },
    source: sourceVersion(),
    method: {
      client: `autocannon ${autocannonVersion()} (programmatic), in the benchmark process`,
      pinning,
      warmupSeconds: WARMUP,
      durationSeconds: DURATION,
      connections: CONNECTIONS,
      pipelining: PIPELINING,
      order: 'canon then bare, one at a time',
      canonRateLimit: process.env.CANON_RATE_LIMIT === 'off' ? 'off' : `on, ${UNLIMITED_RATE} per principal, per IP and global`,
      quietWaitSeconds: QUIET_WAIT,
    },
    results: { canon, bare },
    ratio,
    target: TARGET_RATIO,
    targetMet: problems.length === 0 && ratio >= TARGET_RATIO,
    valid: problems.length === 0,
    problems,
  };
  mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
  writeFileSync(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`results written to ${path.relative(ROOT, RESULTS_FILE)}`);

  if (problems.length > 0) {
    throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
  }
}

main()
  .catch((err) => {
    console.error(`\nbench: FAILED: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  })
  .finally(() => {
    killEverythingNow();
  });
