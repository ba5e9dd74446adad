// Reporting: the results table, validity checks, CPU warnings, machine and source details, and the results JSON.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CORES, CPU_MODEL, ROOT, fmt, settings } from './options.mjs';

const pct = (x) => (x === null || x === undefined ? 'n/a' : `${fmt(x * 100)}%`);

/** Prints one row per measured run; `extraCpu` names an extra CPU column (e.g. 'database'). */
export function printTable(rows, { first = 'server', extraCpu } = {}) {
  const header = [
    first,
    'req/s (avg)',
    'req/s stddev',
    'mean ms',
    'p50 ms',
    'p99 ms',
    '2xx',
    'non-2xx',
    'errors',
    'server CPU',
    'server CPU µs/req',
    'client CPU',
    ...(extraCpu ? [`${extraCpu} CPU`] : []),
    'other CPU',
    'steal',
  ];
  const body = rows.map((r) => [
    r.label,
    fmt(r.requestsPerSecond.average),
    fmt(r.requestsPerSecond.stddev),
    fmt(r.latencyMs.mean, 2),
    fmt(r.latencyMs.p50, 2),
    fmt(r.latencyMs.p99, 2),
    fmt(r['2xx']),
    fmt(r.non2xx),
    fmt(r.errors + r.timeouts),
    pct(r.cpuUtilisation.server),
    r.serverCpuMicrosPerRequest == null ? 'n/a' : fmt(r.serverCpuMicrosPerRequest, 1),
    pct(r.cpuUtilisation.client),
    ...(extraCpu ? [pct(r.cpuUtilisation[extraCpu])] : []),
    pct(r.cpuUtilisation.other),
    pct(r.cpuUtilisation.steal),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of body) console.log(line(row));
}

/** Problems that make a run invalid: no 2xx, any non-2xx, errors or timeouts, or 2xx other than `status`. */
export function problemsOf(r, status = 200) {
  const problems = [];
  if (r['2xx'] === 0) problems.push(`${r.label}: no 2xx responses at all`);
  if (r.non2xx !== 0) problems.push(`${r.label}: ${r.non2xx} non-2xx responses (status codes ${JSON.stringify(r.statusCodes)})`);
  if (r.errors !== 0 || r.timeouts !== 0) problems.push(`${r.label}: ${r.errors} errors, ${r.timeouts} timeouts`);
  // wrk reports no status codes, only answers outside 2xx/3xx (bench/lib/wrk.mjs): nothing to compare then.
  if (r['2xx'] > 0 && Object.keys(r.statusCodes).length > 0 && r.statusCodes[String(status)] !== r['2xx'])
    problems.push(`${r.label}: 2xx other than ${status}: ${JSON.stringify(r.statusCodes)}`);
  return problems;
}

/** Warns about runs whose figure is client-bound, or taken while other processes or the hypervisor took CPU. */
export function warnAboutCpu(rows) {
  for (const r of rows) {
    const { server, client, other, steal } = r.cpuUtilisation;
    if (client > 0.9 && server !== null && server < 0.9) {
      console.warn(
        `bench: WARNING ${r.label}: the client used ${pct(client)} of its core and the server only ${pct(server)}: this figure is client-bound (a lower bound for the server).`,
      );
    } else if (client > 0.95) {
      console.warn(`bench: note ${r.label}: the client core was saturated too (${pct(client)}): the server may be able to do somewhat more than measured.`);
    }
    if (other !== null && other > 0.1) {
      console.warn(`bench: WARNING ${r.label}: other processes used ${pct(other)} of a core during the run: the machine was not quiet, rerun for reliable figures.`);
    }
    if (steal !== null && steal > 0.05) console.warn(`bench: WARNING ${r.label}: the hypervisor stole ${pct(steal)} of a core during the run.`);
  }
}

/** The newest modification time of the compiled server (dist/src), to notice a rebuild during a run. */
function distStamp() {
  try {
    return Math.max(
      ...readdirSync(path.join(ROOT, 'dist/src'), { recursive: true })
        .filter((f) => f.endsWith('.js'))
        .map((f) => statSync(path.join(ROOT, 'dist/src', f)).mtimeMs),
    );
  } catch {
    return null;
  }
}

function gitState() {
  const git = (...args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  const head = git('rev-parse', 'HEAD');
  if (head.error || head.status !== 0) return null;
  const dirty = git('status', '--porcelain', '--', 'src');
  return { commit: head.stdout.trim(), srcDirty: dirty.status === 0 ? dirty.stdout.trim().length > 0 : null };
}

const AT_START = { git: gitState(), dist: distStamp() };

/** The commit measured, whether src/ had uncommitted changes (at the start and at the end), and whether dist/ was rebuilt meanwhile. */
export function sourceVersion() {
  const now = gitState();
  if (!now) return null;
  return { ...now, srcDirtyAtStart: AT_START.git?.srcDirty ?? null, commitAtStart: AT_START.git?.commit ?? null, distRebuiltDuringRun: distStamp() !== AT_START.dist };
}

/** A run whose server code changed under it measured a mixture: invalid. */
export function sourceProblems(source) {
  if (!source) return [];
  const problems = [];
  if (source.distRebuiltDuringRun) problems.push('dist/ was rebuilt during the run: the servers measured may be different builds');
  if (source.commitAtStart !== source.commit) problems.push(`HEAD moved during the run (${source.commitAtStart} -> ${source.commit})`);
  return problems;
}

export function packageVersion(name) {
  try {
    return JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

export function machine() {
  return { node: process.version, platform: `${os.platform()} ${os.release()} ${os.arch()}`, cpuModel: CPU_MODEL, cores: CORES };
}

/** The method fields every script reports. */
export function baseMethod(pinning) {
  return {
    client: `autocannon ${packageVersion('autocannon')} (programmatic), in the benchmark process`,
    pinning,
    warmupSeconds: settings.warmup,
    durationSeconds: settings.duration,
    connections: settings.connections,
    pipelining: settings.pipelining,
    quietWaitSeconds: settings.quietWait,
    ...(settings.cpuProfileDir ? { cpuProfileDir: settings.cpuProfileDir, note: 'Canon ran under node --cpu-prof: figures include the profiler' } : {}),
  };
}

export function headline(title, pinning) {
  console.log(
    `bench: ${title} | node ${process.version} | ${CORES} cores (${CPU_MODEL}) | ` +
      (pinning.pinned ? `servers on core ${pinning.serverCore}, client on core ${pinning.clientCore ?? 'unpinned'}` : 'UNPINNED') +
      ` | warm-up ${settings.warmup} s, measured ${settings.duration} s, ${settings.connections} connections, pipelining ${settings.pipelining}`,
  );
}

/** Writes the results JSON; runs under the profiler go to `<name>.cpu-prof.json`, beside the real figures. */
/** What every results file starts with: the benchmark, when, the machine, the source measured, and the method. */
export function resultsHeader(benchmark, source, pinning, method, machineExtra = {}) {
  return { benchmark, date: new Date().toISOString(), machine: { ...machine(), ...machineExtra }, source, method: { ...baseMethod(pinning), ...method } };
}

export function writeResults(resultsFile, report) {
  const file = settings.cpuProfileDir ? resultsFile.replace(/\.json$/, '.cpu-prof.json') : resultsFile;
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`results written to ${path.relative(ROOT, file)}`);
}

/** "met"/"NOT MET" for a ratio against a minimum (or, with `atMost`, a maximum). */
/** The median: with noisy shared machines, the verdict over several repeats is taken on it, not on one run. */
export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export function verdict(ratio, target, atMost = false) {
  const met = atMost ? ratio <= target : ratio >= target;
  return { ratio, target, comparison: atMost ? '<=' : '>=', met };
}

export function verdictText(name, v) {
  return `${name}: ${fmt(v.ratio, 2)}x (target ${v.comparison} ${v.target}x: ${v.met ? 'MET' : 'NOT MET'})`;
}
