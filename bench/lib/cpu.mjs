// CPU pinning of the client, CPU accounting from /proc, and the bounded wait for a quiet machine.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLIENT_CORE, CORES, SERVER_CORE } from './options.mjs';

function hasTaskset() {
  const probe = spawnSync('taskset', ['--version'], { stdio: 'ignore' });
  return !probe.error && probe.status === 0;
}

export function allowedCpus(pid = 'self') {
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

/** Pins this process to the client core when possible; servers are then started under taskset (see startServer). */
export function setUpPinning() {
  if (!hasTaskset()) {
    console.warn('bench: WARNING `taskset` is not available: servers and client run UNPINNED, figures are less reliable.');
    return { pinned: false, reason: 'taskset not found' };
  }
  if (CORES < 2) {
    console.warn(`bench: WARNING only ${CORES} core(s) available: servers and client run UNPINNED and compete for the CPU.`);
    return { pinned: false, reason: `${CORES} core(s) available` };
  }
  const clientPinned = pinSelf();
  if (!clientPinned) console.warn(`bench: WARNING the client is not pinned (allowed CPUs: ${allowedCpus() ?? 'unknown'}).`);
  return { pinned: true, serverCore: Number(SERVER_CORE), clientCore: clientPinned ? Number(CLIENT_CORE) : null };
}

const CLOCK_TICKS = (() => {
  const probe = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const ticks = Number(probe.stdout?.trim());
  return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
})();

function statFields(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') };
}

/** CPU seconds (user + system) a process has used so far, from /proc; undefined where unavailable. */
export function cpuSecondsOf(pid) {
  try {
    const { fields } = statFields(pid);
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime, stime (fields 14 and 15)
  } catch {
    return undefined;
  }
}

/** CPU seconds per process whose command name is `comm` (e.g. every PostgreSQL backend), keyed by pid. */
export function cpuSecondsByName(comm) {
  const out = new Map();
  let pids;
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    try {
      const { comm: name, fields } = statFields(pid);
      if (name === comm) out.set(pid, (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU seconds used between two cpuSecondsByName samples (processes started meanwhile count from zero). */
export function cpuSecondsBetween(before, after) {
  if (!before || !after) return undefined;
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

/** Busy and steal seconds per core since boot, from /proc/stat (to spot other load during a run). */
export function coreTimes() {
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

/** Busy and steal seconds summed over all cores between two coreTimes() samples. */
export function busyBetween(before, after) {
  let busy = 0;
  let steal = 0;
  for (const core of Object.keys(after)) {
    busy += after[core].busy - (before[core]?.busy ?? after[core].busy);
    steal += after[core].steal - (before[core]?.steal ?? after[core].steal);
  }
  return { busy, steal };
}

/**
 * Waits (bounded by `maxSeconds`) until the whole machine used less than `threshold` of one core over a
 * one-second sample, so that a measured run does not start while something else is busy. Returns the last
 * sample (fraction of one core) and whether the machine was quiet.
 */
export async function waitForQuiet(maxSeconds, threshold = 0.15) {
  let last = null;
  for (let i = 0; i < maxSeconds; i++) {
    const before = coreTimes();
    await sleep(1000);
    const after = coreTimes();
    if (!before || !after) return { quiet: null, busyCores: null };
    last = busyBetween(before, after).busy;
    if (last < threshold) return { quiet: true, busyCores: last, waitedSeconds: i + 1 };
  }
  return { quiet: false, busyCores: last, waitedSeconds: maxSeconds };
}

export function selfCpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}
