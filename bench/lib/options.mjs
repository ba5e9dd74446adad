// Shared benchmark settings: repository paths, the cores used, and the BENCH_* environment variables.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CANON_CLI = path.join(ROOT, 'dist/src/cli/main.js');
export const RESULTS_DIR = path.join(ROOT, 'bench/results');

export const SERVER_CORE = '0';
export const CLIENT_CORE = '1';
export const READY_TIMEOUT_MS = 30_000;
/** A rate limit far above anything one core can serve: rate limiting does its bookkeeping but refuses nothing. */
export const UNLIMITED_RATE = '1000000000/1';
// Read at import, before pinning: once this process is pinned to one core, availableParallelism() reports 1.
export const CORES = os.availableParallelism();
export const CPU_MODEL = os.cpus()[0]?.model ?? 'unknown CPU';

export function intFromEnv(name, fallback, min, max) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new Error(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** The load settings every script shares (see docs/BENCHMARKS.md). */
export const settings = {
  duration: intFromEnv('BENCH_DURATION', 10, 1, 600),
  connections: intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000),
  warmup: intFromEnv('BENCH_WARMUP', 3, 0, 120),
  // Interleaved comparisons (bench/lib/interleave.mjs): slices per target, and seconds per slice.
  slices: intFromEnv('BENCH_SLICES', 10, 1, 100),
  sliceSeconds: intFromEnv('BENCH_SLICE_SECONDS', 1, 1, 60),
  pipelining: intFromEnv('BENCH_PIPELINING', 1, 1, 100),
  // Seconds to wait, at most, for the machine to be idle before each measured run (0: do not wait).
  quietWait: intFromEnv('BENCH_QUIET_WAIT', 30, 0, 600),
  // A directory: Canon runs under `node --cpu-prof` and writes its profiles there (figures then include the profiler).
  cpuProfileDir: process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : undefined,
};

export function fmt(n, digits = 0) {
  return typeof n === 'number' && Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';
}
