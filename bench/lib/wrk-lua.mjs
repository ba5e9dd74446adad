// wrk driven by a generated Lua script (method, headers, body, rotating or random request parts, GraphQL error counting), pinned to the client core, with CPU accounting.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { busyBetween, coreTimes, cpuSecondsOf } from './cpu.mjs';
import { quietWait } from './load.mjs';
import { CLIENT_CORE, fmt, settings } from './options.mjs';
import { assertAlive } from './processes.mjs';

/** In a load's body, where each request gets a fresh UUID-shaped id (`uniqueId`). */
export const ID_SLOT = '00000000-0000-4000-8000-000000000000';
/** In a rotating load's path, where wrk writes each request's offset (`rotate`: a cycle of every offset). */
export const OFFSET_SLOT = '__OFFSET__';
/** In a load's body, where wrk writes one of `pick.values` at random per request (`pick`). */
export const PICK_SLOT = '__PICK__';

const luaString = (s) => {
  if (s.includes(']==]')) throw new Error('string not representable in the wrk script');
  return `[==[${s}]==]`;
};

/**
 * The script for load `l` ({ url, method, headers, body?, rotate?, uniqueId?, pick?, graphql? }):
 * - rotate: n — the path's OFFSET_SLOT takes offsets k·37 mod n, a cycle through every offset (37 is prime to n
 *   unless n is a multiple of 37);
 * - uniqueId — the body's ID_SLOT takes a fresh UUID-shaped id per request (a random prefix, then a counter);
 * - pick: { values, seed } — the body's PICK_SLOT takes values[random] per request, from LuaJIT's generator seeded
 *   with `seed`, so two servers given the same seed get the same sequence;
 * - graphql — every answer whose body holds `"errors"` is counted (a GraphQL error is a 200, which wrk would count
 *   as a success): the summary's `graphql_errors`.
 */
function wrkScript(dir, l) {
  const lines = [`wrk.method = ${luaString(l.method)}`];
  for (const [name, value] of Object.entries(l.headers)) lines.push(`wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`);
  if (l.body !== undefined && !l.uniqueId && !l.pick) lines.push(`wrk.body = ${luaString(l.body)}`);
  if ([l.rotate, l.uniqueId, l.pick].filter(Boolean).length > 1) throw new Error('a load rotates, makes unique ids or picks, not several');
  if (l.rotate) {
    const u = new URL(l.url);
    const [before, after] = `${u.pathname}${u.search}`.split(OFFSET_SLOT);
    lines.push(
      'local counter = 0',
      `local before = ${luaString(before)}`,
      `local after = ${luaString(after)}`,
      'request = function()',
      '  counter = counter + 1',
      `  return wrk.format(nil, before .. tostring((counter * 37) % ${l.rotate}) .. after)`,
      'end',
    );
  }
  if (l.uniqueId) {
    const [before, after] = l.body.split(ID_SLOT);
    const h = randomBytes(8).toString('hex');
    const prefix = `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(12, 15)}-8${h.slice(15, 16)}${randomBytes(1).toString('hex')}-`;
    lines.push(
      'local counter = 0',
      `local before = ${luaString(`${before}${prefix}`)}`,
      `local after = ${luaString(after)}`,
      'request = function()',
      '  counter = counter + 1',
      '  return wrk.format(nil, nil, nil, before .. string.format("%012x", counter) .. after)',
      'end',
    );
  }
  if (l.pick) {
    const [before, after] = l.body.split(PICK_SLOT);
    if (after === undefined) throw new Error(`the body has no ${PICK_SLOT}`);
    lines.push(
      `math.randomseed(${Math.trunc(l.pick.seed)})`,
      `local values = { ${l.pick.values.map(luaString).join(', ')} }`,
      `local before = ${luaString(before)}`,
      `local after = ${luaString(after)}`,
      'request = function()',
      '  return wrk.format(nil, nil, nil, before .. values[math.random(#values)] .. after)',
      'end',
    );
  }
  if (l.graphql) {
    // Globals of the thread's Lua state, read in done() through thread:get (done runs in another state).
    lines.push(
      'local threads = {}',
      'setup = function(thread) table.insert(threads, thread) end',
      'graphql_errors = 0',
      'response = function(status, headers, body)',
      '  if string.find(body, \'"errors"\', 1, true) then graphql_errors = graphql_errors + 1 end',
      'end',
    );
  }
  lines.push(
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    `  local ge = ${l.graphql ? '0' : '-1'}`,
    ...(l.graphql ? ['  for _, t in ipairs(threads) do ge = ge + t:get("graphql_errors") end'] : []),
    '  io.write(string.format("CANON_BENCH_WRK {\\"requests\\":%d,\\"duration_us\\":%d,\\"bytes\\":%d,\\"connect\\":%d,\\"read\\":%d,\\"write\\":%d,\\"status\\":%d,\\"timeout\\":%d,\\"graphql_errors\\":%d,\\"mean_us\\":%.3f,\\"p50_us\\":%d,\\"p90_us\\":%d,\\"p99_us\\":%d,\\"p999_us\\":%d,\\"max_us\\":%d}\\n",',
    '    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout, ge,',
    '    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max))',
    'end',
  );
  const file = path.join(dir, `wrk-${randomBytes(6).toString('hex')}.lua`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const CLOCK_TICKS = (() => {
  const ticks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim());
  return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
})();

/**
 * CPU seconds of this process plus its reaped children (utime, stime, cutime, cstime from /proc/self/stat): wrk's
 * time is added when it exits, the servers' never (they outlive every measured run).
 */
function clientCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/**
 * One wrk run of `seconds` (`-t1 -c<connections>`, under `taskset -c <client core>` when pinned), bounded in time;
 * returns its summary. `dir` receives the script.
 */
export function runWrk(l, seconds, { pinned, dir, connections, timeoutSeconds = 10 }) {
  const script = wrkScript(dir, l);
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', `${timeoutSeconds}s`, '-s', script, l.url];
  const [command, argv] = pinned ? ['taskset', ['-c', CLIENT_CORE, 'wrk', ...args]] : ['wrk', args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out = (out + c.toString()).slice(-16_384)));
    child.stderr.on('data', (c) => (out = (out + c.toString()).slice(-16_384)));
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

/**
 * Warm-up, quiet wait, then a measured wrk run with CPU accounting, shaped as load.mjs's measure() results.
 * `idle`: the other servers waiting on the same core (what they used meanwhile is reported); `extraCpu`:
 * { name, sample(), seconds(before, after) } for another process group (PostgreSQL).
 */
export async function measureWithWrk(server, l, { label, pinned, dir, connections, timeoutSeconds, extraCpu, idle = [] }) {
  const wrkOptions = { pinned, dir, connections, timeoutSeconds };
  if (settings.warmup > 0) {
    process.stdout.write(`bench: ${label}: warm-up ${settings.warmup} s ... `);
    console.log(`${fmt((await runWrk(l, settings.warmup, wrkOptions)).perSecond)} req/s`);
  }
  const quiet = await quietWait();
  process.stdout.write(`bench: ${label}: measuring ${settings.duration} s with ${connections} connections ... `);
  const serverBefore = cpuSecondsOf(server.child.pid);
  const idleBefore = idle.map((s) => cpuSecondsOf(s.child.pid));
  const clientBefore = clientCpuSeconds();
  const extraBefore = extraCpu?.sample();
  const coresBefore = coreTimes();
  const wallBefore = process.hrtime.bigint();
  const w = await runWrk(l, settings.duration, wrkOptions);
  const wallSeconds = Number(process.hrtime.bigint() - wallBefore) / 1e9;
  const serverAfter = cpuSecondsOf(server.child.pid);
  const clientAfter = clientCpuSeconds();
  const idleSeconds = idle.reduce((sum, s, i) => sum + ((cpuSecondsOf(s.child.pid) ?? 0) - (idleBefore[i] ?? 0)), 0);
  const coresAfter = coreTimes();
  const extraSeconds = extraCpu ? extraCpu.seconds(extraBefore, extraCpu.sample()) : undefined;
  console.log(`${fmt(w.perSecond)} req/s`);
  assertAlive(server, 'during the run');
  const serverShare = serverBefore === undefined || serverAfter === undefined ? null : (serverAfter - serverBefore) / wallSeconds;
  // wrk runs in its own process: once reaped, its CPU time counts in this process's cutime and cstime.
  const clientCore = clientBefore === undefined || clientAfter === undefined ? null : (clientAfter - clientBefore) / wallSeconds;
  const cpu = {
    wallSeconds,
    server: serverShare,
    client: clientCore,
    ...(extraCpu ? { [extraCpu.name]: extraSeconds === undefined ? null : extraSeconds / wallSeconds } : {}),
    other: null,
    steal: null,
  };
  if (coresBefore && coresAfter && serverShare !== null) {
    const { busy, steal } = busyBetween(coresBefore, coresAfter);
    cpu.other = Math.max(0, busy / wallSeconds - serverShare - (clientCore ?? 0) - (extraCpu ? (cpu[extraCpu.name] ?? 0) : 0));
    cpu.steal = steal / wallSeconds;
  }
  const failed = w.connect + w.read + w.write;
  return {
    label,
    url: l.url,
    method: l.method,
    command: server.command,
    quietBeforeRun: quiet,
    requestsPerSecond: { average: w.perSecond, stddev: null },
    latencyMs: { mean: w.mean_us / 1000, p50: w.p50_us / 1000, p90: w.p90_us / 1000, p99: w.p99_us / 1000, p999: w.p999_us / 1000, max: w.max_us / 1000 },
    cpuUtilisation: cpu,
    serverCpuMicrosPerRequest: serverShare === null || w.requests === 0 ? null : ((serverAfter - serverBefore) * 1e6) / w.requests,
    throughputBytesPerSecond: w.bytes / w.seconds,
    totalRequests: w.requests,
    // wrk counts answers that are neither 2xx nor 3xx; the exact status was checked before the run.
    '2xx': w.requests - w.status,
    non2xx: w.status,
    errors: failed,
    timeouts: w.timeout,
    wrkErrors: { connect: w.connect, read: w.read, write: w.write, status: w.status, timeout: w.timeout },
    ...(w.graphql_errors >= 0 ? { graphqlErrors: w.graphql_errors } : {}),
    durationSeconds: w.seconds,
    // The other servers of the repeat wait on the same core meanwhile; what they used (a fraction of one core).
    idleServersCpu: idleSeconds / wallSeconds,
    expectedStatus: l.status,
    // wrk does not say which statuses it got: the server's own last words may.
    ...(w.status > 0 ? { serverOutputTail: server.output().slice(-2000) } : {}),
  };
}

/** What makes a wrk run invalid: no 2xx, any answer outside 2xx/3xx, socket errors or timeouts, GraphQL errors. */
export function wrkProblems(r) {
  const problems = [];
  if (r['2xx'] === 0) problems.push(`${r.label}: no 2xx responses at all`);
  if (r.non2xx !== 0) problems.push(`${r.label}: ${r.non2xx} responses that were not 2xx/3xx`);
  if (r.errors !== 0 || r.timeouts !== 0) problems.push(`${r.label}: socket errors ${JSON.stringify(r.wrkErrors)}`);
  if (r.graphqlErrors) problems.push(`${r.label}: ${r.graphqlErrors} answers held GraphQL errors`);
  return problems;
}

/**
 * Two running servers loaded in alternating wrk slices of `seconds` (A B B A A B …, `slices` per server), requests,
 * time and server CPU summed per server: sequential runs compare two moments of a machine whose speed drifts by
 * tens of percent within a minute; here a drift linear over a cycle weighs on both alike. `targets`: two
 * { key, server, load }. Every slice must be free of errors (GraphQL errors included). Returns per key the rate,
 * the per-slice rates and the server CPU µs per request, and `ratio` (first over second).
 */
export async function interleavedWrk(targets, { slices, seconds, label, pinned, dir, connections, timeoutSeconds }) {
  if (targets.length !== 2) throw new Error('interleavedWrk compares exactly two targets');
  const acc = targets.map(() => ({ requests: 0, seconds: 0, cpu: 0, cpuKnown: true, slices: [] }));
  for (let i = 0; i < slices * 2; i++) {
    const pair = Math.floor(i / 2);
    const which = (i % 2) ^ (pair % 2);
    const t = targets[which];
    const before = cpuSecondsOf(t.server.child.pid);
    const w = await runWrk(t.load, seconds, { pinned, dir, connections, timeoutSeconds });
    const after = cpuSecondsOf(t.server.child.pid);
    const failed = w.status + w.timeout + w.connect + w.read + w.write + Math.max(0, w.graphql_errors);
    if (failed > 0) throw new Error(`${label}: interleaved slice on ${t.key}: ${failed} failed, non-2xx or GraphQL-error answers`);
    assertAlive(t.server, 'during the interleaved slices');
    const a = acc[which];
    a.requests += w.requests;
    a.seconds += w.seconds;
    if (before === undefined || after === undefined) a.cpuKnown = false;
    else a.cpu += after - before;
    a.slices.push(Math.round(w.perSecond));
  }
  const out = {};
  targets.forEach((t, i) => {
    const a = acc[i];
    out[t.key] = {
      requestsPerSecond: a.requests / a.seconds,
      slices: a.slices,
      serverCpuMicrosPerRequest: a.cpuKnown && a.requests > 0 ? (a.cpu * 1e6) / a.requests : null,
    };
  });
  const [first, second] = targets.map((t) => out[t.key].requestsPerSecond);
  console.log(
    `bench: ${label}: interleaved, ${slices} slices of ${seconds} s each: ` +
      targets.map((t) => `${t.key} ${fmt(out[t.key].requestsPerSecond)} req/s (${out[t.key].slices.map((x) => fmt(x)).join(', ')})`).join(', '),
  );
  return { ...out, ratio: first / second };
}
