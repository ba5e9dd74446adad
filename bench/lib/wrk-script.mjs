// wrk driven by generated Lua: requests whose parameters are drawn inside the load generator (random offsets, ids, field sets, weighted kinds), run and measured with CPU accounting.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { busyBetween, coreTimes, cpuSecondsBetween, cpuSecondsOf } from './cpu.mjs';
import { quietWait } from './load.mjs';
import { CLIENT_CORE, fmt, settings } from './options.mjs';
import { assertAlive } from './processes.mjs';

/**
 * Why Lua: a benchmark of pages the response cache cannot answer needs every request to ask for another page,
 * drawn while the load runs (issue 31, "random parameters generated in the load generator"); a list of URLs
 * prepared in JavaScript would be replayed in the same order by every run. wrk calls `request()` for each
 * request in one Lua state per thread; with `-t1` that is one state, so counters in it are unique per run.
 *
 * A request kind: `{ name, weight, method, path: pieces, body?: pieces, headers }`. A piece is a string, or
 *   { int: [lo, hi] }   a random integer in [lo, hi] (math.random, seeded per run),
 *   { pick: [...] }     one of the strings,
 *   { line: 'pool' }    a random line of the pool's file (ids to read or update); every line piece of one request
 *                       takes the same line number, so pools of equal length hold the columns of one row,
 *   { take: 'pool' }    the pool's next line, never the same twice within a run (ids to delete); the harness
 *                       passes where each run starts (`starts`) and reads back how many it took (`taken`),
 *   { counter: true }   this run's request number as 12 hex digits (unique ids, with a random prefix per run).
 * A pool running dry sends `/__bench_pool_exhausted__` (a 404 that counts as a failure) instead of repeating.
 */

export const luaString = (s) => {
  if (s.includes(']==]')) throw new Error('string not representable in the wrk script');
  return `[==[${s}]==]`;
};
/** A table key: `[ [==[…]==] ]`, spaced, for `[[` would open a Lua long string. */
const luaKey = (s) => `[ ${luaString(s)} ]`;

function pieceLua(piece, tables) {
  if (typeof piece === 'string') return luaString(piece);
  if (piece.int) return `tostring(math.random(${Math.trunc(piece.int[0])}, ${Math.trunc(piece.int[1])}))`;
  if (piece.pick) {
    tables.push(`{ ${piece.pick.map(luaString).join(', ')} }`);
    const t = `pick${tables.length}`;
    return `${t}[math.random(#${t})]`;
  }
  if (piece.line) return `pools${luaKey(piece.line)}[line]`;
  if (piece.take) return `take(${luaString(piece.take)})`;
  if (piece.counter) return 'string.format("%012x", seq)';
  throw new Error(`unknown request piece ${JSON.stringify(piece)}`);
}

const concat = (pieces, tables) => pieces.map((p) => pieceLua(p, tables)).join(' .. ');

/**
 * The Lua script for `kinds` (chosen by weight), `pools` ({ name: file of one value per line }) and `starts`
 * ({ name: first line index for take }). Its done() prints one line `CANON_BENCH_WRK {json}` with wrk's summary,
 * latency percentiles, and per-pool `taken` counts and `exhausted` requests.
 */
export function requestScript({ kinds, pools = {}, starts = {}, seed = randomBytes(4).readUInt32LE(0) }) {
  const total = kinds.reduce((s, k) => s + (k.weight ?? 1), 0);
  const tables = [];
  const fns = kinds.map((k, i) => {
    const headers = Object.entries(k.headers ?? {}).map(([n, v]) => `${luaKey(n)} = ${luaString(v)}`);
    const firstLine = [...k.path, ...(k.body ?? [])].find((p) => typeof p === 'object' && p.line)?.line;
    return [
      `kinds[${i + 1}] = function()`,
      `  local h = { ${headers.join(', ')} }`,
      firstLine ? `  local line = math.random(#pools${luaKey(firstLine)})` : '',
      `  return wrk.format(${luaString(k.method ?? 'GET')}, ${concat(k.path, tables)}, h${k.body ? `, ${concat(k.body, tables)}` : ''})`,
      'end',
    ].join('\n');
  });
  let acc = 0;
  const bounds = kinds.map((k) => (acc += (k.weight ?? 1) / total));
  bounds[bounds.length - 1] = 1;
  const poolNames = Object.keys(pools);
  return [
    `math.randomseed(${seed})`,
    'pools = {}',
    'taken = {}',
    'exhausted = 0',
    'seq = 0',
    ...poolNames.flatMap((name) => [`do local t = {} for l in io.lines(${luaString(pools[name])}) do t[#t + 1] = l end pools${luaKey(name)} = t end`, `taken${luaKey(name)} = 0`]),
    'function take(name)',
    '  local i = (starts[name] or 0) + taken[name] + 1',
    '  local v = pools[name][i]',
    '  if v == nil then exhausted = exhausted + 1 return nil end',
    '  taken[name] = taken[name] + 1',
    '  return v',
    'end',
    `starts = { ${Object.entries(starts)
      .map(([n, v]) => `${luaKey(n)} = ${Math.trunc(v)}`)
      .join(', ')} }`,
    ...tables.map((t, i) => `pick${i + 1} = ${t}`),
    'kinds = {}',
    ...fns,
    `bounds = { ${bounds.join(', ')} }`,
    'request = function()',
    '  seq = seq + 1',
    '  local r = math.random()',
    '  for i = 1, #bounds do',
    '    if r <= bounds[i] then',
    '      local ok, req = pcall(kinds[i])',
    '      if ok then return req end',
    '      return wrk.format("GET", "/__bench_pool_exhausted__")',
    '    end',
    '  end',
    'end',
    // done() runs in wrk's main Lua state: the thread's counters come back through thread:get.
    'threads = {}',
    'setup = function(thread) threads[#threads + 1] = thread end',
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  local t = threads[1]',
    '  local counts = {}',
    ...poolNames.map((name) => `  counts[#counts + 1] = string.format("\\"%s\\":%d", ${luaString(name)}, t:get("taken")${luaKey(name)})`),
    '  io.write(string.format("CANON_BENCH_WRK {\\"requests\\":%d,\\"duration_us\\":%d,\\"bytes\\":%d,\\"connect\\":%d,\\"read\\":%d,\\"write\\":%d,\\"status\\":%d,\\"timeout\\":%d,\\"mean_us\\":%.3f,\\"p50_us\\":%d,\\"p90_us\\":%d,\\"p99_us\\":%d,\\"p999_us\\":%d,\\"max_us\\":%d,\\"exhausted\\":%d,\\"taken\\":{%s}}\\n",',
    '    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,',
    '    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max,',
    '    t:get("exhausted"), table.concat(counts, ",")))',
    'end',
    '',
  ].join('\n');
}

/** One wrk run (`-t1`, `connections`) of `seconds` against `base` with the script text, bounded in time; returns its summary. */
export function runWrkScript(base, script, seconds, { connections, pinned, dir, timeoutSeconds = 10 }) {
  const file = path.join(dir, `wrk-${randomBytes(6).toString('hex')}.lua`);
  writeFileSync(file, script);
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', `${timeoutSeconds}s`, '-s', file, base];
  const [command, argv] = pinned ? ['taskset', ['-c', CLIENT_CORE, 'wrk', ...args]] : ['wrk', args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const keep = (c) => (out = (out + c.toString()).slice(-16_384));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const limit = (seconds + timeoutSeconds + 30) * 1000;
    const timer = setTimeout(() => child.kill('SIGKILL'), limit);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`wrk could not be started: ${err.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const line = /^CANON_BENCH_WRK (\{.*\})$/m.exec(out)?.[1];
      if (code !== 0 || !line) return reject(new Error(`${command} ${argv.join(' ')} failed (exit ${code}, signal ${signal}, limit ${limit / 1000} s):\n${out}`));
      const s = JSON.parse(line);
      resolve({ ...s, seconds: s.duration_us / 1e6, perSecond: s.requests / (s.duration_us / 1e6) });
    });
  });
}

const CLOCK_TICKS = 100;

/** CPU seconds of this process and its reaped children (wrk's time counts once it exits), from /proc/self/stat. */
function selfAndChildrenSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/**
 * Warm-up (settings.warmup), the bounded quiet wait, then a measured run of settings.duration with CPU accounting.
 * `script(run)` gives the Lua text of run 'warmup' or 'measure' (pools advance between them); `extraCpu` samples
 * the database's processes. Shaped as bench/lib/load.mjs's measure() results, plus `taken` and `exhausted`.
 */
export async function measureScript(server, base, script, { label, connections, pinned, dir, extraCpu, duration = settings.duration, warmup = settings.warmup }) {
  const taken = {};
  let exhausted = 0;
  if (warmup > 0) {
    process.stdout.write(`bench: ${label}: warm-up ${warmup} s ... `);
    const w = await runWrkScript(base, script('warmup'), warmup, { connections, pinned, dir });
    for (const [k, v] of Object.entries(w.taken)) taken[k] = (taken[k] ?? 0) + v;
    exhausted += w.exhausted;
    console.log(`${fmt(w.perSecond)} req/s${w.status > 0 ? ` (${w.status} non-2xx)` : ''}`);
  }
  const quiet = await quietWait();
  process.stdout.write(`bench: ${label}: measuring ${duration} s with ${connections} connections ... `);
  const serverBefore = cpuSecondsOf(server.child.pid);
  const clientBefore = selfAndChildrenSeconds();
  const extraBefore = extraCpu?.sample();
  const coresBefore = coreTimes();
  const wallBefore = process.hrtime.bigint();
  const w = await runWrkScript(base, script('measure', taken), duration, { connections, pinned, dir });
  const wallAfter = process.hrtime.bigint();
  const wallSeconds = Number(wallAfter - wallBefore) / 1e9;
  const serverAfter = cpuSecondsOf(server.child.pid);
  const clientAfter = selfAndChildrenSeconds();
  const coresAfter = coreTimes();
  const extraSeconds = extraCpu ? cpuSecondsBetween(extraBefore, extraCpu.sample()) : undefined;
  console.log(`${fmt(w.perSecond)} req/s, p50 ${fmt(w.p50_us / 1000, 2)} ms, p99 ${fmt(w.p99_us / 1000, 2)} ms${w.status > 0 ? `, ${w.status} NON-2xx` : ''}`);
  assertAlive(server, 'during the run');
  for (const [k, v] of Object.entries(w.taken)) taken[k] = (taken[k] ?? 0) + v;
  exhausted += w.exhausted;
  const serverShare = serverBefore === undefined || serverAfter === undefined ? null : (serverAfter - serverBefore) / wallSeconds;
  const client = clientBefore === undefined || clientAfter === undefined ? null : (clientAfter - clientBefore) / wallSeconds;
  const cpu = {
    wallSeconds,
    server: serverShare,
    client,
    ...(extraCpu ? { database: extraSeconds === undefined ? null : extraSeconds / wallSeconds } : {}),
    other: null,
    steal: null,
  };
  if (coresBefore && coresAfter && serverShare !== null) {
    const { busy, steal } = busyBetween(coresBefore, coresAfter);
    cpu.other = Math.max(0, busy / wallSeconds - serverShare - (client ?? 0) - (cpu.database ?? 0));
    cpu.steal = steal / wallSeconds;
  }
  return {
    label,
    quietBeforeRun: quiet,
    requestsPerSecond: { average: w.perSecond, stddev: null },
    latencyMs: { mean: w.mean_us / 1000, p50: w.p50_us / 1000, p90: w.p90_us / 1000, p99: w.p99_us / 1000, p999: w.p999_us / 1000, max: w.max_us / 1000 },
    cpuUtilisation: cpu,
    serverCpuMicrosPerRequest: serverShare === null || w.requests === 0 ? null : ((serverAfter - serverBefore) * 1e6) / w.requests,
    throughputBytesPerSecond: w.bytes / w.seconds,
    totalRequests: w.requests,
    // wrk counts answers outside 2xx/3xx as status errors; a dry pool's requests are among them (a 404).
    '2xx': w.requests - w.status,
    non2xx: w.status,
    errors: w.connect + w.read + w.write,
    timeouts: w.timeout,
    wrkErrors: { connect: w.connect, read: w.read, write: w.write, status: w.status, timeout: w.timeout },
    durationSeconds: w.seconds,
    taken,
    exhausted,
    // The measured run on the monotonic clock (µs), to take its samples out of a CPU profile (bench/lib/profile-split.mjs).
    window: { startUs: Number(wallBefore / 1000n), endUs: Number(wallAfter / 1000n) },
    ...(w.status > 0 ? { serverOutputTail: server.output().slice(-2000) } : {}),
  };
}

/** Problems that make a wrk run invalid: no 2xx, any answer outside 2xx/3xx, socket errors, timeouts, a dry pool. */
export function wrkProblems(r) {
  const problems = [];
  if (r['2xx'] === 0) problems.push(`${r.label}: no 2xx responses at all`);
  if (r.non2xx !== 0) problems.push(`${r.label}: ${r.non2xx} responses that were not 2xx/3xx`);
  if (r.errors !== 0 || r.timeouts !== 0) problems.push(`${r.label}: socket errors ${JSON.stringify(r.wrkErrors)}`);
  if (r.exhausted > 0) problems.push(`${r.label}: ${r.exhausted} requests found their id pool empty (raise the pool size)`);
  return problems;
}
