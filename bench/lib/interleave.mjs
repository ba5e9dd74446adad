// Same-run comparison of two servers in alternating slices (A B B A …), so that drift of the machine hits both alike.
import { allowedCpus, busyBetween, coreTimes, cpuSecondsOf, selfCpuSeconds } from './cpu.mjs';
import { LatencyHistogram, quietWait, runLoad, warmUp } from './load.mjs';
import { fmt, settings } from './options.mjs';
import { assertAlive } from './processes.mjs';

/**
 * Measures two running servers against each other. On a shared virtual machine throughput drifts by
 * 20–30 % within minutes, more than the differences these benchmarks judge; two back-to-back runs of 10 s
 * each compare two different machines. Here each target is loaded in `slices` slices of `sliceSeconds`,
 * in the order A B B A A B B A …, so a drift that is linear over a cycle weighs on both targets equally,
 * and each target's figures are summed over its slices. `targets`: [{ server, load, label, name, afterSlice? }] (two).
 * `afterSlice()`, when given, runs after each of that target's slices (and after its warm-up and settling slice)
 * and counts in the slice's time and CPU: the work a slice left behind (webhook deliveries) is done before the next.
 * Returns one result per target, shaped as `measure` returns them (plus `slices`: requests/s per slice, and
 * `afterSliceSeconds`: the time spent in afterSlice).
 */
export async function measureInterleaved(targets, { slices = settings.slices, sliceSeconds = settings.sliceSeconds, warmup = settings.warmup } = {}) {
  if (targets.length !== 2) throw new Error('measureInterleaved compares exactly two targets');
  for (const t of targets) {
    await warmUp(t.label, t.name, t.load, warmup);
    await t.afterSlice?.();
  }
  const quiet = await quietWait();
  // One unmeasured slice each, in order, after the quiet wait: the first slice after idling ran about 20%
  // slow, and it always fell to the leading target (measured at 3f830f0: ratios 1–2.5% worse whenever
  // the keyed server led). Now the first measured slice follows one of each.
  for (const t of targets) {
    await runLoad(`${t.name} settling`, t.load, sliceSeconds);
    await t.afterSlice?.();
  }
  const acc = targets.map(() => ({
    histogram: new LatencyHistogram(),
    wallSeconds: 0,
    serverCpu: 0,
    serverCpuKnown: true,
    clientCpu: 0,
    busy: 0,
    steal: 0,
    coresKnown: true,
    requests: 0,
    bytes: 0,
    ok: 0,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    resets: 0,
    statusCodes: {},
    perSlice: [],
    afterSliceSeconds: 0,
  }));
  console.log(`bench: ${targets[0].label} vs ${targets[1].label}: ${slices} slices of ${sliceSeconds} s each, alternating`);
  for (let round = 0; round < slices * 2; round++) {
    // A B | B A | A B | B A …: the first target leads in even pairs, the second in odd ones.
    const pair = Math.floor(round / 2);
    const which = (round % 2) ^ (pair % 2);
    const t = targets[which];
    const a = acc[which];
    const serverBefore = cpuSecondsOf(t.server.child.pid);
    const clientBefore = selfCpuSeconds();
    const coresBefore = coreTimes();
    const wallBefore = process.hrtime.bigint();
    const result = await runLoad(`${t.name} slice ${pair + 1}`, t.load, sliceSeconds, a.histogram);
    if (t.afterSlice) {
      const afterBefore = process.hrtime.bigint();
      await t.afterSlice();
      a.afterSliceSeconds += Number(process.hrtime.bigint() - afterBefore) / 1e9;
    }
    const wall = Number(process.hrtime.bigint() - wallBefore) / 1e9;
    const serverAfter = cpuSecondsOf(t.server.child.pid);
    const coresAfter = coreTimes();
    a.wallSeconds += wall;
    // A load generator in another process (wrk) reports its own CPU time.
    a.clientCpu += selfCpuSeconds() - clientBefore + (result.clientCpuSeconds ?? 0);
    if (serverBefore === undefined || serverAfter === undefined) a.serverCpuKnown = false;
    else a.serverCpu += serverAfter - serverBefore;
    if (coresBefore && coresAfter) {
      const { busy, steal } = busyBetween(coresBefore, coresAfter);
      a.busy += busy;
      a.steal += steal;
    } else a.coresKnown = false;
    a.requests += result.requests.total;
    a.bytes += result.throughput.total;
    a.ok += result['2xx'];
    a.non2xx += result.non2xx;
    a.errors += result.errors;
    a.timeouts += result.timeouts;
    a.resets += result.resets ?? 0;
    for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) a.statusCodes[code] = (a.statusCodes[code] ?? 0) + stat.count;
    a.perSlice.push(result.requests.total / wall);
    assertAlive(t.server, `during slice ${pair + 1}`);
  }
  return targets.map((t, i) => {
    const a = acc[i];
    const perSecond = a.requests / a.wallSeconds;
    const server = a.serverCpuKnown ? a.serverCpu / a.wallSeconds : null;
    const client = a.clientCpu / a.wallSeconds;
    const cpu = {
      wallSeconds: a.wallSeconds,
      server,
      client,
      other: a.coresKnown && server !== null ? Math.max(0, a.busy / a.wallSeconds - server - client) : null,
      steal: a.coresKnown ? a.steal / a.wallSeconds : null,
    };
    const mean = a.perSlice.reduce((s, x) => s + x, 0) / a.perSlice.length;
    console.log(`bench: ${t.label}: ${fmt(perSecond)} req/s over ${a.perSlice.length} slices (${a.perSlice.map((x) => fmt(x)).join(', ')})`);
    return {
      label: t.label,
      url: t.load.url,
      command: t.server.command,
      serverAllowedCpus: allowedCpus(t.server.child.pid) ?? null,
      quietBeforeRun: quiet,
      requestsPerSecond: {
        average: perSecond,
        // spread between slices, not within one
        stddev: Math.sqrt(a.perSlice.reduce((s, x) => s + (x - mean) ** 2, 0) / a.perSlice.length),
        min: Math.min(...a.perSlice),
        max: Math.max(...a.perSlice),
      },
      slices: a.perSlice,
      afterSliceSeconds: a.afterSliceSeconds,
      latencyMs: a.histogram.summary(),
      cpuUtilisation: cpu,
      serverCpuMicrosPerRequest: server === null || a.requests === 0 ? null : (a.serverCpu * 1e6) / a.requests,
      throughputBytesPerSecond: a.bytes / a.wallSeconds,
      totalRequests: a.requests,
      '2xx': a.ok,
      non2xx: a.non2xx,
      errors: a.errors,
      timeouts: a.timeouts,
      resets: a.resets,
      statusCodes: a.statusCodes,
      durationSeconds: a.wallSeconds,
    };
  });
}
