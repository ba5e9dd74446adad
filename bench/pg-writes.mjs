#!/usr/bin/env node
// Benchmark: PostgreSQL write transactions through Canon's store (a product and its event, as a create commits them), this build against an earlier one in the same run.
//
//   BENCH_BASE_ROOT=<a built worktree of an earlier commit> node bench/pg-writes.mjs      (expects a fresh build in dist/)
//
// Both builds' PgStore open one fresh database (migrated by this build) in this process, which runs on core 0
// (taskset when available). Each run: BENCH_CONNECTIONS (default 32) loops of `store.transaction(tx => insert +
// appendEvent)` for BENCH_DURATION seconds (default 3), after one run of each build to warm it up; before each, the rows of earlier runs are deleted and the
// tables vacuumed, so no run pays for another's dead rows. The builds alternate, the order turning every repeat
// (BENCH_REPEATS, default 4). Reported: transactions per second and this process's CPU per transaction, the
// ratios per repeat and their medians. Results: bench/results/pg-writes.json.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { openCanonStore, productRecord } from './lib/canon.mjs';
import { intFromEnv, RESULTS_DIR, ROOT, fmt } from './lib/options.mjs';
import { createDatabase, dropDatabase, withClient } from './lib/pg.mjs';
import { runMain } from './lib/processes.mjs';
import { machine, median, sourceVersion, writeResults } from './lib/report.mjs';

const BASE_ROOT = process.env.BENCH_BASE_ROOT ? path.resolve(process.env.BENCH_BASE_ROOT) : undefined;
const REPEATS = intFromEnv('BENCH_REPEATS', 4, 1, 20);
const SECONDS = intFromEnv('BENCH_DURATION', 3, 1, 60);
const LOOPS = intFromEnv('BENCH_CONNECTIONS', 32, 1, 256);
const RESULTS_FILE = path.join(RESULTS_DIR, 'pg-writes.json');

/** One run: LOOPS concurrent create transactions for SECONDS; transactions per second and CPU µs per transaction. */
async function measure(store, dbName) {
  await withClient(dbName, async (c) => {
    await c.query('DELETE FROM canon_events');
    await c.query('DELETE FROM products');
    await c.query('VACUUM products, canon_events, canon_counts');
  });
  let n = 0;
  let i = 0;
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const end = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: LOOPS }, async () => {
      while (performance.now() < end) {
        const record = productRecord(i++);
        await store.transaction(async (tx) => {
          await tx.insert('products', record);
          await tx.appendEvent({
            id: randomUUID(),
            type: 'product.created',
            resource: 'products',
            object_id: record.id,
            owner_id: null,
            api_version: 'v2',
            created_at: record.created_at,
            data: {},
          });
        });
        n++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  // The stamping of the run's events finishes before the next run starts.
  await store.sequenceEvents();
  return { perSecond: n / seconds, cpuUsPerTx: (cpu.user + cpu.system) / n, transactions: n };
}

async function main() {
  if (!BASE_ROOT) throw new Error('BENCH_BASE_ROOT (a built worktree of an earlier commit) is required: the run compares this build with it');
  const db = await createDatabase();
  try {
    const open = (root) => openCanonStore(db.url, { root, max: 10, listCache: false });
    const builds = { now: await open(ROOT), before: await open(BASE_ROOT) };
    console.log(`bench: pg-writes: ${LOOPS} loops of a create transaction (product + event), ${SECONDS} s per run, ${REPEATS} repeats, this build against ${BASE_ROOT}`);
    // Each build's modules are their own: both are warmed up (JIT, prepared statements) before anything counts.
    for (const key of ['before', 'now']) await measure(builds[key], db.name);
    const runs = { now: [], before: [] };
    for (let r = 0; r < REPEATS; r++) {
      const order = r % 2 === 0 ? ['before', 'now'] : ['now', 'before'];
      for (const key of order) {
        const m = await measure(builds[key], db.name);
        runs[key].push(m);
        console.log(`bench: r${r + 1} ${key.padEnd(6)} ${fmt(m.perSecond)} tx/s, ${fmt(m.cpuUsPerTx)} µs CPU per transaction`);
      }
    }
    for (const s of Object.values(builds)) await s.close();
    const ratios = runs.now.map((m, i) => m.perSecond / runs.before[i].perSecond);
    const cpuRatios = runs.now.map((m, i) => m.cpuUsPerTx / runs.before[i].cpuUsPerTx);
    console.log(`now / before transactions per second: ${ratios.map((x) => x.toFixed(2)).join(' / ')}, median ${median(ratios).toFixed(2)}x`);
    console.log(`now / before CPU per transaction: ${cpuRatios.map((x) => x.toFixed(2)).join(' / ')}, median ${median(cpuRatios).toFixed(2)}x`);
    writeResults(RESULTS_FILE, {
      benchmark: 'pg-writes',
      date: new Date().toISOString(),
      machine: machine(),
      source: sourceVersion(),
      method: { loops: LOOPS, secondsPerRun: SECONDS, repeats: REPEATS, order: 'builds alternating, turning every repeat', base: BASE_ROOT },
      runs,
      ratios,
      cpuRatios,
    });
  } finally {
    await dropDatabase(db.name);
  }
}

runMain(main);
