// Load generation with autocannon: warm-up, quiet wait, measured run with 10 µs latency buckets and CPU accounting.
import autocannon from 'autocannon';
import { allowedCpus, busyBetween, coreTimes, cpuSecondsOf, selfCpuSeconds, waitForQuiet } from './cpu.mjs';
import { fmt, settings } from './options.mjs';
import { assertAlive, withServer } from './processes.mjs';
import { runWrk } from './wrk.mjs';

/**
 * autocannon's own latency histogram has 1 ms resolution, too coarse for sub-millisecond answers, so the
 * response times it reports are also counted here in 10 µs buckets (up to 10 s; slower ones share the last).
 */
export class LatencyHistogram {
  constructor() {
    this.bucketUs = 10;
    this.counts = new Uint32Array(1_000_001);
    this.total = 0;
    this.sumMs = 0;
  }

  record(ms) {
    const bucket = Math.min(this.counts.length - 1, Math.floor((ms * 1000) / this.bucketUs));
    this.counts[bucket]++;
    this.total++;
    this.sumMs += ms;
  }

  mean() {
    return this.total === 0 ? undefined : this.sumMs / this.total;
  }

  /** p50, p90, p99, p99.9 and the mean, in ms. */
  summary() {
    return { p50: this.percentile(50), p90: this.percentile(90), p99: this.percentile(99), p999: this.percentile(99.9), mean: this.mean() };
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

/**
 * One autocannon run. `load` holds url and optionally headers, method, body, requests (autocannon's
 * request list, e.g. with setupRequest), connections and timeout (seconds). With `engine: 'wrk'` (GETs
 * only: url and headers), wrk runs instead (bench/lib/wrk.mjs): no per-response latencies then.
 */
export function runLoad(title, load, duration, histogram) {
  if (load.engine === 'wrk') return runWrk(title, load, duration, load.connections ?? settings.connections);
  return new Promise((resolve, reject) => {
    let settled = false;
    const timeout = load.timeout ?? 10;
    const options = {
      title,
      url: load.url,
      headers: load.headers ?? {},
      connections: load.connections ?? settings.connections,
      pipelining: settings.pipelining,
      duration,
      timeout,
      ...(load.method ? { method: load.method } : {}),
      ...(load.body !== undefined ? { body: load.body } : {}),
      ...(load.requests ? { requests: load.requests } : {}),
    };
    const instance = autocannon(options, (err, result) => {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      if (err) reject(err);
      else resolve(result);
    });
    // autocannon stops by itself after `duration`; this guard only catches a client that hangs.
    const guard = setTimeout(
      () => {
        if (settled) return;
        settled = true;
        instance.stop();
        reject(new Error(`${title}: autocannon did not finish within ${duration + timeout + 30} s`));
      },
      (duration + timeout + 30) * 1000,
    );
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
      ...histogram.summary(), // mean exact, from the same response times
      average: result.latency.average, // autocannon's, 1 ms resolution
      max: result.latency.max,
      autocannon1msResolution: { p50: result.latency.p50, p99: result.latency.p99 },
    },
    cpuUtilisation: cpu,
    // Server CPU time per completed request: what a request costs, unlike requests/s unaffected by time the
    // hypervisor stole from the server's core (steal is not charged to the process).
    serverCpuMicrosPerRequest: cpu.server === null || !result.requests.total ? null : (cpu.server * cpu.wallSeconds * 1e6) / result.requests.total,
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

/** Loads `load` for `seconds` (none when 0), not counted; prints the rate reached. */
export async function warmUp(label, name, load, seconds = settings.warmup) {
  if (seconds <= 0) return;
  process.stdout.write(`bench: ${label}: warm-up ${seconds} s ... `);
  const warm = await runLoad(`${name} warm-up`, load, seconds);
  console.log(`${fmt(warm.requests.average)} req/s`);
}

/** Waits (at most BENCH_QUIET_WAIT s) for the machine to go idle; returns what it saw. */
export async function quietWait() {
  if (settings.quietWait <= 0) return { quiet: null, busyCores: null, waitedSeconds: 0 };
  const quiet = await waitForQuiet(settings.quietWait);
  if (quiet.quiet === false) console.warn(`bench: WARNING the machine stayed busy (${fmt(quiet.busyCores * 100)}% of a core) for ${settings.quietWait} s; measuring anyway.`);
  return quiet;
}

/**
 * Warms up, waits for a quiet machine, then measures `load` against a running server. `extraCpu`
 * ({ name, sample(), seconds(before, after) }) accounts for another process group, e.g. PostgreSQL.
 */
export async function measure(server, load, { label, name = label, duration = settings.duration, warmup = settings.warmup, extraCpu } = {}) {
  await warmUp(label, name, load, warmup);
  const quiet = await quietWait();
  process.stdout.write(`bench: ${label}: measuring ${duration} s with ${load.connections ?? settings.connections} connections ... `);
  const histogram = new LatencyHistogram();
  const serverCpuBefore = cpuSecondsOf(server.child.pid);
  const clientCpuBefore = selfCpuSeconds();
  const extraBefore = extraCpu?.sample();
  const coresBefore = coreTimes();
  const wallBefore = process.hrtime.bigint();
  const measured = await runLoad(name, load, duration, histogram);
  const wallSeconds = Number(process.hrtime.bigint() - wallBefore) / 1e9;
  const serverCpuAfter = cpuSecondsOf(server.child.pid);
  const coresAfter = coreTimes();
  const extraSeconds = extraCpu ? extraCpu.seconds(extraBefore, extraCpu.sample()) : undefined;
  const cpu = {
    wallSeconds,
    // fractions of one core over the measured run; a server near 1.0 is the bottleneck
    server: serverCpuBefore === undefined || serverCpuAfter === undefined ? null : (serverCpuAfter - serverCpuBefore) / wallSeconds,
    client: (selfCpuSeconds() - clientCpuBefore) / wallSeconds,
    ...(extraCpu ? { [extraCpu.name]: extraSeconds === undefined ? null : extraSeconds / wallSeconds } : {}),
    other: null,
    steal: null,
  };
  if (coresBefore && coresAfter && cpu.server !== null) {
    // Everything else that ran on the machine meanwhile (summed over all cores), and hypervisor steal.
    const { busy, steal } = busyBetween(coresBefore, coresAfter);
    cpu.other = Math.max(0, busy / wallSeconds - cpu.server - cpu.client - (extraCpu ? (cpu[extraCpu.name] ?? 0) : 0));
    cpu.steal = steal / wallSeconds;
  }
  console.log(`${fmt(measured.requests.average)} req/s`);
  assertAlive(server, 'during the run');
  return { label, url: load.url, command: server.command, serverAllowedCpus: allowedCpus(server.child.pid) ?? null, quietBeforeRun: quiet, ...summarise(measured, histogram, cpu) };
}

/** Start, wait for /healthz, prepare (returns { url, headers, check }), warm up, measure, stop. */
export async function benchmarkServer({ name, label, start, prepare }) {
  return withServer(start, async (server, base) => {
    const { url, headers, check } = await prepare(base);
    const { label: l, url: u, command, serverAllowedCpus, quietBeforeRun, ...rest } = await measure(server, { url, headers }, { label, name });
    return { label: l, url: u, command, serverAllowedCpus, quietBeforeRun, check, ...rest };
  });
}
